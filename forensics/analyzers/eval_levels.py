"""Where an eval loss was at its best, and how far above it a later eval has to sit to count as a rise.

The thresholds and level tests the `overfitting` rules share, those that read the eval loss alone
(`overfitting`) and those that set it against the training loss (`overfit_train_rules`).
"""
from __future__ import annotations

import numpy as np

_NEIGHBOURS = 2  # a long eval series' best is judged with this many evals on each side of it ...
LONG = 15  # ... from this many evals on: one lucky low eval among noisy ones is not a level it had reached


def best_level(values: np.ndarray, best_pos: int) -> float:
    """The level the eval loss had at its best: the lowest eval itself, or in a long series the median of it
    and its neighbours (a single-batch validation loss dips by chance; a real best is where the loss was)."""
    if len(values) < LONG:
        return float(values[best_pos])
    around = values[max(0, best_pos - _NEIGHBOURS):best_pos + _NEIGHBOURS + 1]
    return float(np.median(around))


SMALL_RISE = 0.01  # a quiet eval loss's rise counts from 1% above its best ...
NOISE_UNITS = 3.0  # ... when that is also this many times its own point-to-point noise
CLIMB = 2 * SMALL_RISE  # a climb that is not long (`overfitting`'s `_long_climb`) counts from this rise
# A rise under `SMALL_RISE` counts where it is this many times the eval loss's own noise: a fixed eval set scored
# often is quiet by construction (Bhattars1's BioGPT, evals 0.04% apart point to point), so its 1% hides a turn
# that is forty times its noise; ten times is far past anything chance moves such a series by.
QUIET_UNITS = 10.0


def back_at_the_level_before(values: np.ndarray, best_pos: int) -> bool:
    """The evals after the best sit (their median) no higher than the highest of the two just before it: the best
    was a lucky low among evals at one level, not a turn."""
    just_before, after = values[max(0, best_pos - 2):best_pos], values[best_pos + 1:]
    return bool(len(just_before)) and len(after) > 0 and float(np.median(after)) <= float(just_before.max())
