"""Tests of analyzers/nonfinite.py: a preference trainer's logits mean NaN now and then.

From the session-8 judging rules (second batch), each from a real run the corpus holds (tests/realworld/PROVENANCE.md).

* A preference trainer's diagnostic mean (logits/*, logps/*) NaN in a few logging windows, finite between them, while
  the training loss is finite and falling, is a warning even when the last window is one of them
  (FugueZ/Qwen2.5-0.5B-SFT-DPO: logits/chosen NaN at 3 of 62 windows, the last included, eval loss falling throughout).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from forensics.analyzers.nonfinite import detect_nonfinite_metrics
from forensics.config import Thresholds


NAN = math.nan


def _dpo(logits: list[float], loss: list[float] | None = None) -> dict:
    """A DPO history logged every 100 steps: the loss falling from ln 2, logits/chosen as given."""
    n = len(logits)
    steps = list(range(100, 100 * n + 1, 100))
    if loss is None:
        loss = list(np.linspace(0.692, 0.633, n))
    return {"loss": pd.Series(loss, index=steps, dtype="float64"),
            "logps/chosen": pd.Series(np.linspace(-300, -290, n), index=steps, dtype="float64"),
            "logits/chosen": pd.Series(logits, index=steps, dtype="float64")}


def _logits(n: int, nan_at: tuple[int, ...]) -> list[float]:
    return [NAN if i in nan_at else -2.1 + 0.01 * i for i in range(n)]


def test_a_logits_mean_nan_now_and_then_with_a_finite_loss_is_a_warning_even_when_the_last_point_is_nan():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, (1, 15, 39))), Thresholds())
    assert (found.kind, found.severity, found.step) == ("nonfinite_metric", "warning", 200)
    assert "3 points of 40" in found.message


def test_a_logits_mean_nan_to_the_end_from_its_first_nan_stays_an_error():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, tuple(range(30, 40)))), Thresholds())
    assert (found.severity, found.step) == ("error", 3100)


def test_a_logits_mean_nan_in_more_than_a_quarter_of_the_points_stays_an_error():
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, tuple(range(3, 40, 3)))), Thresholds())
    assert found.severity == "error"


def test_a_sporadic_logits_nan_beside_a_loss_at_exactly_zero_stays_an_error():
    loss = list(np.linspace(0.692, 0.633, 40))
    loss[20] = 0.0  # HF's NaN filter: the loss itself went NaN there
    (found,) = detect_nonfinite_metrics(_dpo(_logits(40, (1, 15, 39)), loss), Thresholds())
    assert found.severity == "error"


def test_a_dpo_run_with_finite_metrics_has_no_nonfinite_finding():
    assert detect_nonfinite_metrics(_dpo(_logits(40, ())), Thresholds()) == []
