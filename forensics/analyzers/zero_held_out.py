"""A held-out loss that is no measurement: exactly 0 at every evaluation while the training loss beside it is not.

No model predicts text it never saw perfectly while it still misses on the text it trains on: a held-out
cross-entropy written as exactly 0.0 (0.0000 as a 4-decimal print writes it) at each of `MIN_EVALS` or more
evaluations, from the first, while every training loss logged over those steps is above `collapse_abs`, says the
validation set is empty (filtered away), or its loss is never computed or zeroed - the log cannot tell which
(RohollahHS_ChatBot: validation 0.0000 at every iteration of the launches after MAX_LENGTH 20 / MIN_COUNT 3, the
training loss 5.9 -> 4.9). A `zero_loss_unexplained` warning at the first such evaluation: the run has no held-out
evidence. A training loss at zero too is the collapse detectors' question (`collapse`).
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, finite, format_number, real_loss
from .overfitting import eval_loss_names

MIN_EVALS = 3  # two zeros could be one rounding twice; three or more evaluations, every one exactly 0, are a pattern


def detect_zero_held_out(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `zero_loss_unexplained` warning for the first eval loss that is exactly 0 throughout (module docstring)."""
    train = real_loss(metrics)
    for name in eval_loss_names(metrics):
        held = finite(metrics[name])
        if len(held) < MIN_EVALS or (held != 0.0).any():
            continue
        beside = train[(train.index >= held.index.min()) & (train.index <= held.index.max())]
        if beside.empty or (beside <= thresholds.collapse_abs).any():
            continue
        first, last = int(held.index.min()), int(held.index.max())
        message = (f"{name} is exactly 0 at every one of its {len(held)} evaluations (steps {first}-{last}) while "
                   f"the training loss over those steps is {format_number(beside.min())} to "
                   f"{format_number(beside.max())}: no model predicts unseen data perfectly while it still misses on "
                   "its training data, so the held-out loss is not measured - an empty validation set (filtered "
                   "away), or a loss never computed or zeroed; the log cannot tell which. Check the validation "
                   "set's size after filtering and the code that computes its loss.")
        return [Finding("zero_loss_unexplained", "warning", first, message, end_step=last, metric=name,
                        evidence={"evaluations": len(held), "train_min": float(beside.min()),
                                  "train_max": float(beside.max())})]
    return []
