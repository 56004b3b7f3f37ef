"""A hand-written loop's step line that names its losses by their split alone, no `loss` word: a bracketed step out of
the run's planned steps, then `Train X`, then after a `|` the held-out split's `Val Y` (a tag may follow the split's
name: the share of the validation set it was measured on):

    [08:04:18] [INFO] [Step    500/159210] Train 9.6801 | Val~20% 9.6793

(seopseop77_Transformer: an English->Korean Transformer from scratch, every 500 steps; its first Train value is
ln 16000, the uniform guess over its 16,000-piece vocabulary, which says the values are cross-entropy losses).

A bare `Train 0.93` could be any figure (an accuracy, a time); it is read as the loss only in this record: a
`[Step N/T]` counter in brackets right before it, and the held-out value after a `|` where there is one. Kind
"split_values" at the printed step, T the planned steps; `Train` as `loss`, the validation (or valid, eval, dev, test)
value as `eval_loss`.
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

NEEDLE = "] Train "
SPLIT_VALUES = re.compile(
    r"\[[ \t]*Step[ \t]+(\d{1,12})[ \t]*/[ \t]*(\d{1,12})[ \t]*\][ \t]+Train(?:ing)?[ \t]+(" + FLOAT
    + r")(?:[ \t]*\|[ \t]*(?:val(?:id|idation)?|eval|dev|test)(?:[~@(][^\s|]{0,16})?[ \t]+("
    + FLOAT + r"))?[ \t]*$", re.IGNORECASE)


def split_values(m: re.Match) -> StepLine:
    """`[Step N/T] Train X | Val Y` (module docstring): kind "split_values" at step N of T."""
    metrics = (("loss", float(m.group(3))),) + ((("eval_loss", float(m.group(4))),) if m.group(4) else ())
    return StepLine("split_values", int(m.group(1)), int(m.group(2)), metrics)
