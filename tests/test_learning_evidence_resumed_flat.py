"""Tests of analyzers/learning_evidence.py: a flat resumed log, a noisy log that falls.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
from forensics.config import Thresholds


# ---- a falling least-squares line over a flat log with a hump in the middle is no evidence of learning -----------------

from forensics.analyzers.learning_evidence import detect_no_learning_evidence  # noqa: E402


def _resumed_flat(hump: float, end: float) -> dict:
    """100 points: the first tenth at 0.7527, up by `hump` over the next quarter, then down to `end` at the last tenth."""
    n = 100
    wobble = [0.004, -0.003, 0.006, -0.005, 0.002, -0.004, 0.005, -0.006, 0.003, -0.002]
    level = [0.7527 if i < 10 else 0.7527 + hump * (i - 10) / 25 if i < 35 else
             0.7527 + hump + (end - 0.7527 - hump) * min(1.0, (i - 35) / 55) for i in range(n)]
    values = [v + wobble[i % 10] for i, v in enumerate(level)]
    return {"loss": pd.Series(values, index=list(range(10, 10 * n + 1, 10)), dtype="float64")}


def test_a_flat_resumed_log_with_a_hump_in_the_middle_shows_no_learning():
    (found,) = detect_no_learning_evidence(_resumed_flat(0.08, 0.7507), Thresholds())
    assert (found.kind, found.step) == ("no_learning_evidence", 10)


def test_a_noisy_log_whose_line_and_ends_both_fall_shows_learning():
    assert detect_no_learning_evidence(_resumed_flat(0.0, 0.70), Thresholds()) == []
