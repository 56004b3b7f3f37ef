"""Tests of analyzers/learning_evidence.py: a flat excerpt that begins mid-run.

From session 10's judging fixes, each rule from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
from forensics.config import Thresholds


def _every_step(losses: list[float], first_step: int) -> dict:
    return {"loss": pd.Series(losses, index=range(first_step, first_step + len(losses)), dtype="float64")}


# ---- a log that begins mid-run and whose loss did not fall: the advice is its missing start -------------------------

from forensics.analyzers.learning_evidence import detect_no_learning_evidence  # noqa: E402


def test_a_flat_excerpt_that_begins_mid_run_says_its_start_is_missing():
    # haotian-liu/LLaVA issue 918's paste: six every-step losses from step 2564 of a 10,485-step run
    (found,) = detect_no_learning_evidence(_every_step([0.6623, 0.8022, 4.2653, 0.77, 0.556, 0.8223], 2564),
                                           Thresholds())
    assert (found.kind, found.severity, found.step) == ("no_learning_evidence", "warning", 2564)
    assert "begins at step 2564, not at the run's start" in found.message
    assert "Check the learning rate" not in found.message


def test_a_flat_log_from_the_run_s_start_keeps_the_advice_about_the_training():
    (found,) = detect_no_learning_evidence(_every_step([0.6623, 0.8022, 0.7, 0.77, 0.556, 0.8223], 1), Thresholds())
    assert "Check the learning rate" in found.message
    assert "not at the run's start" not in found.message
