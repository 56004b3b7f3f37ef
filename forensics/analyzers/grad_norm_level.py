"""A gradient norm in the tens of thousands or more at every logged step: the loss is scaled wildly.

The gradient of a model's mean loss (a language model's cross-entropy, a classifier's) has a norm of
about 0.1 to 100 (early pre-training and the first steps of a fine-tune sit at the top of that range; a
spike leaves it for a few steps). A norm of `grad_norm_huge` or more at every logged step is no spike:
the loss being differentiated is scaled far beyond a mean (an fp16 loss scale not undone, a loss summed
over tokens or micro-batches) or the numerics are off. With clipping at max_grad_norm every update is
then a unit-length step whatever the gradient says, so the learning rate alone sets its size: a warning,
with what to check.
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, Metrics, finite

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
    return [Finding("grad_norm_huge", "warning", int(grad.index[0]), message, end_step=int(grad.index[-1]),
                    metric=GRAD_NORM, evidence={"min": low, "max": high, "median": median, "points": len(grad)})]
