"""A hand-written loop's epoch record that names its loss "cost": `--- Epoch #0 finished --- Training cost: 4.139 /
Validation cost: 3.255` (jonathanbgn_slogan-generator's distilgpt2 fine-tune, a line an epoch, epochs from 0).

"cost" is read as the loss only in this record, an epoch's number before it and the training split named: the
word alone is any other figure's (a price, a compute budget). Kind "epoch_cost" at the printed epoch (numbered
with the other once-an-epoch lines by `step_numbering`, however few: a two-epoch run prints two): the training cost as
`loss`, a validation (or valid, val, dev, test) cost as `eval_loss`. On a file's last line (no newline after it) the
cost that ends the line may be cut mid-write: it is left out and the record marked cut (`fields.printed_shape` and the
console reader take the line whole where it is printed in the shape of a line before it).
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

NEEDLE = " cost: "
EPOCH_COST = re.compile(r"^[-=*#\s]*epoch[ \t]*#?[ \t]*(\d{1,6})[ \t]+(?:finished|done|completed|ended)[-=*#:\s]*"
                        r"train(?:ing)?[ \t]+cost:[ \t]*(" + FLOAT + r")"
                        r"(?:[ \t]*[/,|;][ \t]*(?:validation|valid|val|dev|test)[ \t]+cost:[ \t]*(" + FLOAT + r"))?",
                        re.IGNORECASE)


def epoch_cost(m: re.Match, last_line: bool = False) -> StepLine | None:
    """`Epoch #E finished --- Training cost: X / Validation cost: Y` (module docstring): kind "epoch_cost" at E; on
    the file's last line the cost that ends it may be cut: left out, the record marked cut (none without X)."""
    epoch = int(m.group(1))
    cut = last_line and m.end() == len(m.string)
    if cut and not m.group(3):
        return None
    metrics = (("loss", float(m.group(2))),) + ((("eval_loss", float(m.group(3))),) if m.group(3) and not cut else ())
    return StepLine("epoch_cost", epoch, None, metrics + (("epoch", float(epoch)),), cut)
