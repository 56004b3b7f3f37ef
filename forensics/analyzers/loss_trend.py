"""The loss's trend as the divergence rules read it: a centred rolling median a tenth of the log wide, the last
points that must stay up, and whether a rise began at a learning-rate restart (a new phase, not a divergence).
Shared by divergence.py and blow_up.py, which judge a rise from it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from .metrics import Metrics, lr_restart_steps

MIN_POINTS = 5  # fewer finite loss points than this hold no trend to leave
START_POINTS = 5  # the level a log starts at: the median of its first few points, before any warm-up peak


def smoothed(values: np.ndarray) -> np.ndarray:
    """Centred rolling median, a tenth of the log wide (odd, 3 to 51 points)."""
    return pd.Series(values).rolling(smoothing_width(len(values)), center=True, min_periods=1).median().to_numpy()


def smoothing_width(n: int) -> int:
    """The width of `smoothed`'s window over a log of `n` points: a tenth of it, odd, 3 to 51."""
    width = int(min(51, max(3, n // 10)))
    return width + 1 - width % 2


def tail_points(n: int, thresholds: Thresholds) -> int:
    """How many last points must stay up: `divergence_points`, or a fifth of a short log (at least 2)."""
    return int(min(thresholds.divergence_points, max(2, n // 5)))


def restart_near(metrics: Metrics, loss: pd.Series, onset: int) -> bool:
    """True when the learning-rate schedule restarted within two logged points of the onset (a position in `loss`)."""
    lo = int(loss.index[max(onset - 2, 0)])
    hi = int(loss.index[min(onset + 1, len(loss) - 1)])
    return any(lo <= r <= hi for r in lr_restart_steps(metrics))
