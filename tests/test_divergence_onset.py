"""A divergence is dated where the loss leaves its low level, not at the first smoothed point a noise unit over its
lowest: a loss that creeps up slowly at its level for a long stretch (a tenth of its later rise over most of the
log) and then climbs many-fold left that level where the climb begins (a ChatGLM3 LoRA logged every 50 steps: 1.84
creeping to 2.07 over 12000 steps, then 2.3, 3.1, 6.8 and 6.2-6.6 to the end). A loss that holds a flat level and
jumps, or climbs steadily straight from its low, is dated where it leaves the low, as before."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.divergence import detect_divergence
from forensics.config import Thresholds

N = 1000  # points, logged every 50 steps


def _loss(values):
    return {"loss": pd.Series(values, index=np.arange(50, 50 * len(values) + 1, 50), dtype="float64")}


def _noise(seed: int):
    return np.random.default_rng(seed).normal(0, 0.04, N)


def _divergence_step(values) -> int:
    found = detect_divergence(_loss(values), Thresholds())
    assert [f.kind for f in found] == ["divergence"]
    return found[0].step


def test_a_slow_creep_before_the_climb_is_still_the_low_level():
    """1.85 creeping to 2.1 over the first 300 points (15000 steps), then climbing to 6.3 by point 420 and holding
    there: the divergence starts where the climb does (15000), not where the creep first passed the noise (thousands of
    steps earlier)."""
    x = np.arange(N)
    level = np.where(x < 300, 1.85 + 0.25 * x / 300, 2.1 + 4.2 * np.clip((x - 300) / 120, 0, 1))
    step = _divergence_step(level + _noise(0))
    assert 14000 <= step <= 19000


def test_a_flat_level_then_a_jump_is_dated_at_the_jump():
    """Flat at 2.0 (noise 0.04) for 500 points, then 6.0 to the end: the jump at step 25050."""
    x = np.arange(N)
    step = _divergence_step(np.where(x < 500, 2.0, 6.0) + _noise(1))
    assert 25000 <= step <= 25500


def test_a_steady_climb_straight_from_the_low_is_dated_at_the_low():
    """Down from 3.0 to 1.0 over the first 100 points, then up in a straight line to 5.0 at the end: the loss left its
    low at once (step 5000) and is dated where it first stands its noise over it (7600), with no level held to date it
    later."""
    x = np.arange(N)
    level = np.where(x < 100, 3.0 - 2.0 * x / 100, 1.0 + 4.0 * (x - 100) / (N - 100))
    step = _divergence_step(level + _noise(2))
    assert 5000 <= step <= 8000
