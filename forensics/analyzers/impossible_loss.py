"""Values a loss cannot take: a negative cross-entropy.

A language-model (SFT or pre-training) loss is a cross-entropy, never below 0. A logged loss
below `-impossible_loss_tolerance` therefore says the loss function or its logging is wrong
(a fused or approximate cross-entropy kernel, a custom loss, label smoothing done wrong), and
whatever the log shows near 0 cannot be read as "learned". A warning: the run may still be
fine, but its loss curve cannot be trusted. Preference and RL logs (DPO, GRPO: rewards/*,
logps/*) are skipped: their losses can be negative by design.
"""
from __future__ import annotations


from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, is_preference_log, real_loss


def detect_impossible_loss(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `impossible_loss` warning from the first negative loss of an SFT/pre-training log, or []."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    loss = real_loss(metrics)
    negative = loss[loss.to_numpy() < -thresholds.impossible_loss_tolerance]
    if negative.empty:
        return []
    first, lowest = int(negative.index[0]), float(negative.min())
    message = (f"loss is negative at {len(negative)} logged {'step' if len(negative) == 1 else 'steps'} from step "
               f"{first} (lowest {format_number(lowest)}): a cross-entropy cannot be below 0, so the loss function or its "
               "logging is off (a fused or approximate kernel, a custom loss) and the curve near 0 cannot be "
               "read as learning.")
    evidence = {"n_points": int(len(negative)), "lowest": lowest, "lowest_step": int(negative.idxmin()),
                "share": float(len(negative) / max(len(loss), 1))}
    return [Finding("impossible_loss", "warning", first, message, end_step=int(negative.index[-1]), metric=LOSS,
                    evidence=evidence)]


__all__ = ["detect_impossible_loss"]
