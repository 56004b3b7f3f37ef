"""No update at all: grad_norm exactly 0 at every logged step, and the log shows nothing learned.

A gradient norm of exactly 0.0 is no small gradient: nothing reached the trainable weights (an adapter or
parameters that do not require gradients, gradient checkpointing on a PEFT model without input
gradients, a detached loss, GRPO advantages that are all 0). When it is 0 at every one of at least
`_MIN_POINTS` logged steps and neither the loss nor the reward improved, the weights never changed: a
`no_learning_signal` error (VERDICTS.md: never learned, with grad_norm 0). Where the loss or reward did
improve, or an RL log's KL to the reference rose, the zeros are the logging's (some DeepSpeed versions
report 0), not the training's, and nothing is said. Runs the other detectors already name (a loss of
exactly 0 with masked labels, a fresh head at ln(vocabulary), GRPO groups that all scored alike) are left
to them.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .dead_reward import detect_dead_reward_signal
from .learning_evidence import learning_shown
from .metrics import GRAD_NORM, Metrics, finite, head_and_tail, real_loss
from .never_learned import detect_never_learned

_MIN_POINTS = 5


def detect_no_gradient(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error over the whole log, or []."""
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else None
    if grad is None or len(grad) < max(_MIN_POINTS, thresholds.learning_min_points) or np.any(grad.to_numpy() != 0):
        return []
    loss = real_loss(metrics)
    if len(loss) and np.all(loss.to_numpy() == 0.0):
        return []  # loss and grad_norm both 0: masked labels, the collapse detector's no_learning_signal
    if learning_shown(metrics, thresholds) is not None or _policy_moved(metrics):
        return []
    if detect_never_learned(metrics, thresholds) or detect_dead_reward_signal(metrics, thresholds):
        return []
    first, last = int(grad.index[0]), int(grad.index[-1])
    message = (f"grad_norm is exactly 0 at every one of the {len(grad)} logged steps ({first} to {last}) and the log "
               "shows nothing learned: no gradient reached the trainable weights, so they never changed. Check that "
               "the adapter or parameters require gradients (gradient checkpointing on a PEFT model needs the inputs "
               "to require grads), that the loss is not detached from the model, and in GRPO that the advantages are "
               "not all 0; a DeepSpeed release that reports the norm as 0 would leave the loss or reward improving, "
               "which this one does not.")
    return [Finding("no_learning_signal", "error", first, message, end_step=last, metric=GRAD_NORM,
                    evidence={"points": int(len(grad)), "grad_norm_zero": True, "frozen": True})]


def _policy_moved(metrics: Metrics) -> bool:
    """An RL log's KL to the reference rising clearly (to over twice its start, above 1e-4): the weights did
    change, whatever grad_norm says (a DeepSpeed release that logs the norm as 0)."""
    kl = finite(metrics["kl"]) if "kl" in metrics else None
    if kl is None or len(kl) < 4:
        return False
    start, end = head_and_tail(kl)
    return end > 1e-4 and end > 2 * max(start, 0.0)
