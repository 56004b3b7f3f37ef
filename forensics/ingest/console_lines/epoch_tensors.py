"""The once-an-epoch line of PEFT's documented example loops (the prefix / prompt tuning and LoRA notebooks of the
peft repository, copied into many real notebooks), an f-string of the loop's locals in their `{name=}` form:

    epoch=0: train_ppl=tensor(4.9660, device='cuda:0') train_epoch_loss=tensor(1.6026, device='cuda:0')
    eval_ppl=tensor(1.1292, device='cuda:0') eval_epoch_loss=tensor(0.1215, device='cuda:0')

(one line; Birkbeck_msc-projects-2023-4-Gabriele_Monti_PEFT). `train_epoch_loss` is the mean training loss over the
epoch's batches, `eval_epoch_loss` the mean over the eval set after it, each `_ppl` exp of its loss; a value may be
printed as a torch tensor or, `.item()`-ed, as a plain number. Kind "generic_epoch": epoch E is its step, as the
other once-an-epoch prints. A loss is read only where no perplexity beside it disagrees (the example computes each
`_ppl` as `torch.exp` of its loss, so a `_ppl` that is not says these are other quantities).
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine, _record
from .epoch_split import perplexity_of

# `epoch=E:` at the line's start (or right after a tqdm bar's last redraw, where stderr's bar and stdout's print share
# a line: Birkbeck's last epoch), then `name=value` pairs, a value bare or in its tensor's repr
EPOCH_TENSORS = re.compile(r"(?:^|(?<=it/s\])|(?<=s/it\]))\s*epoch=(\d{1,6}):(?=[ \t]+\w+=(?:tensor\()?[-+.\dnNiI])",
                           re.IGNORECASE)
_PAIR = re.compile(r"(?<![\w.])([A-Za-z]\w{0,60})=(?:tensor\(\s*)?(" + FLOAT + r")"
                   r"(?:\s*,\s*(?:device|dtype|grad_fn|requires_grad)=[^()]*?(?:<\w+>)?)*\)?(?=\s|$)", re.IGNORECASE)
_HELD_OUT = re.compile(r"^(?:eval|val|valid|validation|test|dev)_", re.IGNORECASE)


def epoch_tensors(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """The losses (and perplexities) of a PEFT example's epoch line (module docstring) at step E, the epoch as a
    metric; None where the line holds no loss, or a perplexity beside a loss is no exp of it. On a file's last line
    the last pair may be cut: left out."""
    pairs = [(name.lower(), raw) for name, raw in _PAIR.findall(line, m.end())]
    cut = last_line and bool(pairs) and not line.rstrip().endswith(")")
    losses, ppls = {}, {}
    for name, raw in pairs[:-1] if cut else pairs:
        split = "eval" if _HELD_OUT.match(name) else "train"
        if name.endswith("loss"):
            losses.setdefault(split, raw)
        elif name.endswith(("ppl", "perplexity")):
            ppls.setdefault(split, raw)
    if not losses or any(split in ppls and not perplexity_of(ppls[split], raw) for split, raw in losses.items()):
        return None
    metrics = [("loss" if split == "train" else "eval_loss", float(raw)) for split, raw in losses.items()]
    metrics += [("ppl" if split == "train" else "eval_ppl", float(raw))
                for split, raw in ppls.items() if split in losses]
    return _record("generic_epoch", int(m.group(1)), None, metrics + [("epoch", float(m.group(1)))], cut)
