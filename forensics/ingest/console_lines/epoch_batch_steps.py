"""A loop's step line that counts its place as epoch and batch letters, then `|`-separated groups of `Name:value`
tokens with no space after the colon (Johnny221B_latent-MAS's train.py, its latent multi-agent GSM8K runs):

    E2 B56/233 | Loss:0.3537 Task:0.3537 Graph:0.0000 | C∇:4.272686 A∇:0.236944 | tok:0.0s fwd:5.5s bwd:1.5s |
    mem:97.3GB | elapsed:33m04s eta:3h00m12s

E counts epochs from 1, B the batch of the epoch's N: the step of the whole run is (E - 1) x N + B. Kind
"epoch_batch" at that step. Read: Loss -> loss, Task -> task_loss, Graph -> graph_loss (the two parts of the loss);
the `∇` tokens are one module's gradient norm each, before clipping (`compute_grad_norm(compressor.parameters())`),
never the whole model's, so they are kept apart from `grad_norm`: C∇ -> grad_norm_compressor, P∇ ->
grad_norm_projector, A∇ -> grad_norm_adjacency (another letter's module is unknown: left out). Times, memory, elapsed
and eta are left out. Every token must be such a pair and a Loss among them, or it is no such line. On a file's last
line the last token may be cut mid-write: left out unchecked, the line marked cut (none where no loss is left).
"""
from __future__ import annotations

import re

from .fields import StepLine, number

NEEDLE = " | Loss:"
EPOCH_BATCH = re.compile(r"^[ \t]*E(\d{1,6}) B(\d{1,9})/(\d{1,9}) \|(?= Loss:)")
_NAMES = {"Loss": "loss", "Task": "task_loss", "Graph": "graph_loss", "C∇": "grad_norm_compressor",
          "P∇": "grad_norm_projector", "A∇": "grad_norm_adjacency"}


def epoch_batch(m: re.Match, last_line: bool = False) -> StepLine | None:
    """`E<e> B<b>/<N> | Loss:X ...` (module docstring): kind "epoch_batch" at step (e - 1) x N + b, or None where a
    token is no `Name:value` pair or a value no number; on the file's last line its last token is left out."""
    epoch, batch, per_epoch = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= batch <= per_epoch or epoch < 1:
        return None
    tokens = m.string[m.end():].replace("|", " ").split()
    cut = last_line and bool(tokens)
    metrics = []
    for token in tokens[:-1] if cut else tokens:
        name, sep, raw = token.partition(":")
        if not (sep and name and raw):
            return None
        if name in _NAMES:
            value = number(raw)
            if value is None:
                return None
            metrics.append((_NAMES[name], value))
    if "loss" not in dict(metrics):
        return None  # (its Loss was the token cut off)
    metrics.append(("epoch", epoch - 1 + batch / per_epoch))
    return StepLine("epoch_batch", (epoch - 1) * per_epoch + batch, None, tuple(metrics), cut)
