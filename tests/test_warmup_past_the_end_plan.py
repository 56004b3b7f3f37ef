"""Tests of analyzers/warmup_past_the_end.py: a warm-up longer than a run that ran its plan.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd


# ---- a configured warm-up longer than the whole run --------------------------------------------------------------------

from forensics.analyzers.warmup_past_the_end import detect_warmup_past_the_end  # noqa: E402


def _ramp(last_step: int, epochs_planned: float) -> dict:
    steps = list(range(1, last_step + 1))
    return {"learning_rate": pd.Series([1e-7 * (s - 1) for s in steps], index=steps, dtype="float64"),
            "epoch": pd.Series([epochs_planned * s / last_step for s in steps], index=steps, dtype="float64"),
            "loss": pd.Series([0.85 - 0.001 * s for s in steps], index=steps, dtype="float64")}


def test_a_warmup_longer_than_a_run_that_ran_its_plan_is_an_lr_anomaly():
    (found,) = detect_warmup_past_the_end(_ramp(84, 3.0), 100, -1, 3.0)
    assert (found.kind, found.severity, found.step) == ("lr_anomaly", "warning", 1)
    assert "warmup_steps 100" in found.message


def test_a_log_cut_short_in_its_warmup_or_a_warmup_that_ended_is_not():
    cut = _ramp(84, 1.2)  # stopped (or pasted) 1.2 epochs into a 3-epoch plan: the warm-up was not what ended it
    assert detect_warmup_past_the_end(cut, 100, -1, 3.0) == []
    assert detect_warmup_past_the_end(_ramp(84, 3.0), 50, -1, 3.0) == []
    assert detect_warmup_past_the_end(_ramp(84, 3.0), None, -1, 3.0) == []
