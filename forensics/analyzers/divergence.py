"""Divergence: the training loss rises and stays up to the end of the log.

The loss is smoothed with a trailing rolling median (`spike_window` points), so single noisy
batches neither start nor end a divergence. It diverges when the smoothed loss stays above
`divergence_factor` x its own running minimum for the last `divergence_points` points or
more, and at the end has come back less than `divergence_max_recovery` of the way from its
peak to that minimum (a loss that jumps and then falls again is a spike or a new phase, not
a divergence). A rise that starts at a learning-rate restart is a new training phase.
Always an error: it lasts to the end by definition. Preference/RL logs are skipped.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, is_preference_log, lr_restart_steps, real_loss


def detect_divergence(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `divergence` finding (error) from the step the loss last stood at its normal level, or []."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    loss = real_loss(metrics)
    rise = _sustained_rise(loss, thresholds)
    if rise is None:
        return []
    start, floor, peak = rise
    values = loss.to_numpy()
    end_level = float(np.median(values[-thresholds.divergence_points:]))
    if peak > floor and (peak - end_level) / (peak - floor) >= thresholds.divergence_max_recovery:
        return []
    limit = thresholds.divergence_factor * floor
    normal = np.nonzero(values[:start] <= limit)[0]
    rise_pos = int(normal[-1]) + 1 if len(normal) else 0
    rise_step = int(loss.index[rise_pos])
    if _restart_near(metrics, loss, rise_pos, start):
        return []
    message = (f"loss diverges from step {rise_step}: it rises from a low of about {format_number(floor)} and stays "
               f"above {format_number(limit)} to the end of the log (about {format_number(end_level)} at the end).")
    evidence = {"floor": floor, "end_level": end_level, "peak": peak, "factor": end_level / floor if floor else None,
                "n_points": len(values) - rise_pos}
    return [Finding("divergence", "error", rise_step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence=evidence)]


def _sustained_rise(loss: pd.Series, thresholds: Thresholds) -> tuple[int, float, float] | None:
    """(position where the smoothed loss starts staying high, its running minimum then, its peak after)."""
    if len(loss) < thresholds.spike_min_history + thresholds.divergence_points:
        return None
    smooth = loss.rolling(thresholds.spike_window, min_periods=thresholds.spike_min_history).median().to_numpy()
    floor = pd.Series(smooth).cummin().shift(1).to_numpy()
    with np.errstate(invalid="ignore"):
        above = smooth > thresholds.divergence_factor * floor
    above = np.where(np.isnan(floor) | (floor <= 0), False, above)
    if not above[-1]:
        return None
    stays = np.nonzero(~above)[0]
    start = int(stays[-1]) + 1 if len(stays) else 0
    if len(above) - start < thresholds.divergence_points:
        return None
    return start, float(floor[start]), float(np.nanmax(smooth[start:]))


def _restart_near(metrics: Metrics, loss: pd.Series, rise_pos: int, start: int) -> bool:
    """True when the learning-rate schedule restarted between the last normal point and the rise."""
    lo = int(loss.index[max(rise_pos - 1, 0)])
    hi = int(loss.index[start])
    return any(lo <= r <= hi for r in lr_restart_steps(metrics))
