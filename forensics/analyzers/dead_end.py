"""A loss that came down from a blow-up only to stop moving: not a recovery (`came_back_dead`, for divergence.py).

divergence.py calls a loss that rose many-fold and then fell back part of the way a spike or a new phase. Not where it
sat up there on most of its points after its low and then froze: its last points one exact value repeated, above its
low, is a model that no longer changes, not one learning back (ChristianPE1_transformer-test: 4.28 at epoch 107, the
20.0 clamp on 288 epochs under an LR raised 5% an epoch, then 6.783610 on each of the last 20).
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from .metrics import format_number, repeats_at_the_end

_FROZEN_POINTS = 10  # the last this many points one exact value: the loss stopped moving ...
_WORSE = 1.25  # ... this many times its low or more (blow_up.py's bar for a run worse than before) ...
_UP_SHARE = 0.5  # ... after it stayed above the divergence bar on at least this share of its points since its low


def came_back_dead(since_low: np.ndarray, low: float, thresholds: Thresholds) -> bool:
    """Whether a loss (its raw points from its low on) stayed above `divergence_factor` x its low on at least
    `_UP_SHARE` of them and ends frozen: its last `_FROZEN_POINTS` points one exact value, `_WORSE` x the low or
    more."""
    if low <= 0 or len(since_low) < 2 * _FROZEN_POINTS:
        return False
    frozen = float(since_low[-1])
    return repeats_at_the_end(since_low) >= _FROZEN_POINTS and frozen >= _WORSE * low \
        and frozen - low >= thresholds.divergence_min_rise \
        and float(np.mean(since_low > thresholds.divergence_factor * low)) >= _UP_SHARE


def dead_end_message(rise_step: int, low: float, since_low: np.ndarray, thresholds: Thresholds) -> str:
    """What `came_back_dead` saw, as the divergence finding says it."""
    bar = thresholds.divergence_factor * low
    frozen = float(since_low[-1])
    repeats = repeats_at_the_end(since_low)
    return (f"loss diverges from step {rise_step}: it rises from a low of about {format_number(low)} to sit above "
            f"{format_number(bar)} on {float(np.mean(since_low > bar)):.0%} of the points after it (up to "
            f"{format_number(float(np.max(since_low)))}), and ends frozen at exactly {format_number(frozen)} "
            f"({format_number(frozen / low)}x the low) on its last {repeats} points: a model that stopped moving, not "
            "one that recovered.")
