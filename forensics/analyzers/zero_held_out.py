"""A held-out loss that is no measurement: exactly 0 at every evaluation while the training loss beside it is not.

No model predicts text it never saw perfectly while it still misses on the text it trains on: a held-out
cross-entropy written as exactly 0.0 (0.0000 as a 4-decimal print writes it) at each of `MIN_EVALS` or more
evaluations, from the first, while every training loss logged over those steps is `_TRAIN_FAR_ABOVE` or more and
no other held-out loss is measured at them, says the validation set is empty (filtered away), or its loss is never
computed or zeroed - the log cannot tell which (RohollahHS_ChatBot: validation 0.0000 at every iteration of the
launches after MAX_LENGTH 20 / MIN_COUNT 3, the training loss 5.9 -> 4.9). A `zero_loss_unexplained` warning at the
first such evaluation: the run has no held-out evidence. A training loss at zero too is the collapse detectors'
question (`collapse`).
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, finite, format_number, real_loss
from .overfitting import eval_loss_names

MIN_EVALS = 3  # two zeros could be one rounding twice; three or more evaluations, every one exactly 0, are a pattern
# The training loss beside at this or more: a 0.0000 printed at 4 decimals is a held-out loss under 0.00005, 2000x
# under it - no eval-mode gap (dropout off) goes so far, so it is no rounded measurement; beside a training loss of
# 0.01 a held-out loss of 0.00004 may be real (an easy set, a memorized one), and the log cannot tell it from a 0.
_TRAIN_FAR_ABOVE = 0.1


def detect_zero_held_out(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `zero_loss_unexplained` warning for the first eval loss that is exactly 0 throughout (module docstring).

    `thresholds` is not read: every detector takes it (the analyzers call them all alike), and this one's bars are no
    tuning - `MIN_EVALS` and `_TRAIN_FAR_ABOVE` follow from a 4-decimal print's rounding, not from a run's scale."""
    train = real_loss(metrics)
    for name in eval_loss_names(metrics):
        held = finite(metrics[name])
        if len(held) < MIN_EVALS or (held != 0.0).any() or _another_measured(metrics, name, held.index):
            continue
        beside = train[(train.index >= held.index.min()) & (train.index <= held.index.max())]
        if beside.empty or (beside < _TRAIN_FAR_ABOVE).any():
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


def _another_measured(metrics: Metrics, name: str, steps) -> bool:
    """Whether another held-out loss is non-zero at one of `steps`: the evaluation ran, and `name` is a part of it
    that is 0 (an auxiliary loss this model does not use), not a held-out loss left unmeasured."""
    return any((finite(metrics[other]).reindex(steps) > 0).any() for other in eval_loss_names(metrics) if other != name)
