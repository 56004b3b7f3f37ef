"""Console step lines of hand-written training loops drawn by a tqdm bar that shows the loss:
* A tqdm bar whose postfix holds a loss, as custom training loops print it (`progress.set_postfix(loss=...)`
  or `set_postfix_str(f"loss {x:.4f}")`): `SFT:   3%|▎  | 10/375 [02:09<1:13:19, 12.05s/it, loss 6.0530]`
  (kind "tqdm_postfix"); its step is the bar's n; an `Epoch E` before the bar restarts it each epoch, so
  the epoch is kept as a metric and the stdout reader numbers the steps on across epochs. The postfix
  repeats its last value at every redraw: the reader keeps a value where it changes.
* A tqdm bar whose description holds the loss (`pbar.set_description(f"batch loss {loss:.3f}")`): `batch loss 0.702:
  100%|██████████| 2000/2000 [04:19<00:00,  7.72it/s]` (shambhavikris_Reward_Alignment's reward
  models), kind "tqdm_postfix" too: the description is read as a generic line's pairs (`hand_written`), its step the
  bar's n.
"""
from __future__ import annotations

import re

from ...timeline import canonical_metric
from .fields import StepLine, _record, number
from .hand_written import GENERIC_STEP, GLOBAL_STEP, HELD_OUT_BESIDE, generic_pairs, hand_written_line, bare_count

# A tqdm bar (`[prefix: ]P%|bar| n/total [elapsed<left, rate, postfix...]`) whose postfix names a loss.
TQDM_BAR = re.compile(r"\d{1,3}%\|[^|]{0,200}\|\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*"
                       r"\[[^\],\]]{0,60},\s*[^\],]{0,40}(?:it/s|s/it)\s*,"
                       r"(?P<postfix>[^\]]{0,500}(?i:loss)[^\]]{0,500})\]")
# A tqdm bar with its description (`{desc}: P%|bar| n/total [`), the description read for a loss (`tqdm_description`).
TQDM_DESCRIBED = re.compile(r"(?P<desc>[^\r\n|\]]{0,120}?(?i:loss)[^\r\n|\]]{0,120}?)\s*:\s*\d{1,3}%\|[^|]{0,200}\|"
                             r"\s*(?P<n>\d{1,18})/(?P<total>\d{1,18})\s*\[")
_HELD_OUT_BAR = re.compile(r"(?<![a-z])(?:val(?:id|idation)?|eval(?:uation)?|test|dev)(?![a-z])", re.IGNORECASE)
# (a key may be words: a loop's own `set_postfix({"Training Loss": loss})` draws `Training Loss=0.365`)
_POSTFIX_PAIR = re.compile(r"^\s*([A-Za-z][\w/.-]*(?: [A-Za-z][\w/.-]*){0,3})\s*[=:]?\s*"
                           r"([-+]?(?:nan|inf|\.?\d)[^\s,]*)\s*$",
                           re.IGNORECASE)
_POSTFIX_SKIP = {"v_num"}  # Lightning's run version, not a metric
_BAR_EPOCH = re.compile(r"\bEpoch\s*(\d{1,6})", re.IGNORECASE)
_POSTFIX_TRAIN = {"train_loss": "loss", "train_lr": "learning_rate", "train_grad_norm": "grad_norm"}


def _tqdm_postfix(first: re.Match, line: str, last_line: bool) -> StepLine | None:
    """The last redraw on the line of a tqdm bar whose postfix holds a loss (module docstring); `first` is
    the first redraw the shape found, the line may hold more."""
    m = list(TQDM_BAR.finditer(line, first.start()))[-1]
    prefix = line[max(0, m.start() - 200):m.start()]  # the bar's label (`Epoch 2: `), looked back for, bounded
    metrics = []
    for part in m.group("postfix").split(","):
        pair = _POSTFIX_PAIR.match(part)
        value = number(pair.group(2)) if pair else None
        if value is not None and pair.group(1) not in _POSTFIX_SKIP:
            key = pair.group(1).lower().replace(" ", "_")  # (`set_postfix(Loss=...)` draws `Loss=2.31`)
            metrics.append((canonical_metric(key), value))
    if not any(name == "loss" or name.endswith("_loss") for name, _ in metrics):  # not loss_scale alone
        return None
    # NeMo-Aligner's `train_loss=2.3, train_lr=1e-05`: the step's own
    if not any(name == "loss" for name, _ in metrics):
        metrics = [(_POSTFIX_TRAIN.get(name, name), value) for name, value in metrics]
    epoch = _BAR_EPOCH.search(prefix.rsplit("|", 1)[-1])
    if epoch:
        metrics.append(("epoch", float(epoch.group(1))))
    return _record("tqdm_postfix", int(m.group("n")), m.group("total"), metrics, False)


def tqdm_description(first: re.Match, line: str, last_line: bool) -> StepLine | None:
    """The last redraw on the line of a tqdm bar whose description names a loss with its number (module docstring),
    read as a generic line's pairs (`batch loss 0.702`, `Epoch 2 loss=1.3`), held-out where a split word names the
    bar (`Epoch: 1 Average Val Batch Loss: 0.1206`: AananthV_Pytorch-Transformer); None for any other description
    (`Map`, `Loading checkpoint shards`: the shape needs a loss), and a description that counts its own steps
    (`Epoch 1, Step 0, Loss: 0.9741:`, the bar's n one ahead: BeyonderXX_TRACE_issue5) is read as a generic line, by
    that count."""
    m = list(TQDM_DESCRIBED.finditer(line, first.start()))[-1]
    desc = m.group("desc")
    metrics, _ = generic_pairs(desc, False)
    if not any(name in ("loss", "eval_loss") for name, _ in metrics) or GLOBAL_STEP.search(desc) \
            or GENERIC_STEP.search(desc) or bare_count(desc):
        return hand_written_line(first, line, last_line)
    if _HELD_OUT_BAR.search(desc):
        metrics = [(HELD_OUT_BESIDE.get(name, "eval_loss" if name == "loss" else name), value)
                   for name, value in metrics]
    return _record("tqdm_postfix", int(m.group("n")), m.group("total"), metrics, False)
