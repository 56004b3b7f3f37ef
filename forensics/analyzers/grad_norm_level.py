"""A gradient norm in the thousands or more at every logged step: the loss is scaled wildly.

The gradient of a model's mean loss (a language model's cross-entropy, a classifier's) has a norm of
about 0.1 to 100 (early pre-training and the first steps of a fine-tune sit at the top of that range; a
spike leaves it for a few steps). A norm of `grad_norm_huge` or more at every logged step is no spike:
the loss being differentiated is scaled far beyond a mean (an fp16 loss scale not undone, a loss summed
over tokens or micro-batches) or the numerics are off. With clipping at max_grad_norm every update is
then a unit-length step whatever the gradient says, so the learning rate alone sets its size: a warning,
with what to check.

A huge norm that also keeps growing (tenfold or more from the first logged step to the last, up at three
of four points) while the loss stops falling is no fixed scale: the gradients are blowing up and the run
learns nothing (grokfast issue 9: 3.8e12 growing 1.5x a line to 1.4e14, the loss flat at 11.1-11.4). An
error. A run still learning keeps the warning (an fp16 loss scale left in grows in steps as well).
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
import numpy as np
import pandas as pd

from .metrics import GRAD_NORM, LOSS, Metrics, finite, real_loss

_MIN_POINTS = 3


def detect_huge_grad_norm(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `grad_norm_huge` warning over the whole log when every finite grad_norm is that large, or []."""
    if GRAD_NORM not in metrics:
        return []
    grad = finite(metrics[GRAD_NORM])
    if len(grad) < _MIN_POINTS or float(grad.min()) < thresholds.grad_norm_huge:
        return []
    low, high, median = float(grad.min()), float(grad.max()), float(grad.median())
    message = (f"grad_norm is {low:.3g} to {high:.3g} at every one of the {len(grad)} logged "
               f"steps (median {median:.3g}): the gradient of a mean loss has a norm of about 0.1 to 100, "
               "so the loss being differentiated is scaled far beyond a mean (an fp16 loss scale not undone, a loss "
               "summed over tokens or micro-batches) or the numerics are off. With clipping, every update is a "
               "unit-length step whatever the gradient says. Check how the loss is reduced and what the precision "
               "settings do.")
    growth = float(grad.iloc[-1] / grad.iloc[0])
    blowing_up = _keeps_growing(grad) and not _loss_falling(metrics)
    if blowing_up:
        message = (f"grad_norm is {low:.3g} at the first logged step and grows {growth:.3g}-fold to {high:.3g} by the "
                   f"last of {len(grad)}, up from the step before at {_rises(grad)} of {len(grad) - 1}, while the loss "
                   "stopped falling: the gradients are blowing up (no fixed scale grows like this) and the run is not "
                   "learning. Check the precision settings, the learning rate and any custom gradient code (a filter "
                   "or a summed loss).")
    return [Finding("grad_norm_huge", "error" if blowing_up else "warning", int(grad.index[0]), message,
                    end_step=int(grad.index[-1]), metric=GRAD_NORM,
                    evidence={"min": low, "max": high, "median": median, "points": len(grad), "growth": growth,
                              "blowing_up": blowing_up})]


_GROWTH = 10.0  # the last grad_norm this many times the first ...
_RISING_SHARE = 0.75  # ... and up from the point before at this share of the points


def _rises(grad: pd.Series) -> int:
    return int((np.diff(grad.to_numpy(dtype="float64")) > 0).sum())


def _keeps_growing(grad: pd.Series) -> bool:
    return float(grad.iloc[-1]) >= _GROWTH * float(grad.iloc[0]) and _rises(grad) >= _RISING_SHARE * (len(grad) - 1)


def _loss_falling(metrics: Metrics) -> bool:
    """Whether the loss still falls: its second half's median under the lowest of its first half (True with no
    loss to tell: the warning, not an error, is what a norm alone supports)."""
    loss = real_loss(metrics) if LOSS in metrics else pd.Series(dtype="float64")
    if len(loss) < 4:
        return True
    half = len(loss) // 2
    return float(loss.iloc[half:].median()) < float(loss.iloc[:half].min())
