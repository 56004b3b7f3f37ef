"""When memorization starts, for a loss that went on to ~0 (analyzers.memorization.dated_from_settling): where its
descent levelled off (half its way down on a log scale), but no earlier than where it settled within 1.5x the
memorization level, the convention `memorized_without_eval` dates a loss settled under that level by.

Artin200912_llama-mci (pyreft over ~300 epochs of a few dozen examples, no eval): 2.40 at step 20, 0.04 at 2280 (half
its way down to 0.001 on a log scale), then 0.03-0.04 to ~2700, 0.006 at 3300, 0.001 at 3420. Judged memorized from
~3300 (+-700): at 2280 a tenfold fall to ~0 is still ahead.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds

TH = Thresholds()


def _metrics(loss: np.ndarray) -> dict[str, pd.Series]:
    n = len(loss)
    index = pd.Index(np.arange(1, n + 1) * 20, name="step")
    return {"loss": pd.Series(loss, index=index), "grad_norm": pd.Series(np.full(n, 0.5), index=index),
            "epoch": pd.Series(np.linspace(1.0, 300.0, n), index=index)}


def _memorization(loss: np.ndarray):
    (found,) = [f for f in detect_loss_collapse(_metrics(loss), TH) if f.kind == "memorization"]
    return found


def _artin_like() -> np.ndarray:
    """A fall from 2.4 to 0.05 over 60 points, 0.05 -> 0.035 over the next 100, then down to 0.0005 by point 220."""
    i = np.arange(250)
    fast = 2.4 * np.exp(-i[:60] * np.log(2.4 / 0.05) / 59)
    slow = np.linspace(0.05, 0.035, 100)
    to_zero = 0.035 * np.exp(-np.arange(1, 61) * np.log(0.035 / 0.0005) / 60)
    return np.concatenate([fast, slow, to_zero, np.full(30, 0.0005)])


def test_a_descent_halfway_down_at_a_few_hundredths_is_dated_where_it_settles_near_the_memorization_level():
    loss = _artin_like()
    found = _memorization(loss)
    halfway = 20 * (1 + int(np.argmax(loss <= np.sqrt(2.4 * 0.001))))  # where the old dating put it (~step 1200)
    under_band = 20 * (1 + int(np.argmax(loss <= 1.5 * TH.memorization_level)))
    assert found.step >= under_band > halfway + 1000
    assert found.step < found.evidence["near_zero_step"]
    assert f"settles under 0.03 from step {found.step}" in found.message


def test_a_descent_that_levels_off_under_the_band_keeps_its_levelled_off_date():
    # 0.8 -> ~0 without a pause: half its way down on a log scale to its first near-zero point (0.027) is already
    # under 1.5x the memorization level (0.03)
    loss = 0.8 * np.exp(-np.arange(70) / 5.0)
    floor = float(loss[np.argmax(loss <= TH.collapse_abs)])
    assert np.sqrt(0.8 * floor) < 1.5 * TH.memorization_level
    found = _memorization(loss)
    assert found.step == 20 * (1 + int(np.argmax(loss <= np.sqrt(0.8 * floor))))
    assert "its descent levelled off from" in found.message


def test_a_healthy_fine_tune_gets_no_memorization_date_at_all():
    loss = 0.6 + 1.4 * np.exp(-np.arange(200) / 30.0)  # 2.0 -> 0.6: a task learned, nowhere near 0
    assert [f for f in detect_loss_collapse(_metrics(loss), TH) if f.kind == "memorization"] == []
