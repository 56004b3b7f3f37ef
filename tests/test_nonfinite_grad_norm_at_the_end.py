"""Tests of analyzers/nonfinite.py: a grad norm NaN at the last points.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


# ---- a grad_norm non-finite at the last points only, with a finite loss logged after it: skipped, not damage --------

from forensics.analyzers.nonfinite import detect_nonfinite_metrics  # noqa: E402


def _grad_nan_at_the_end(grads: list[float], losses: list[float]) -> dict:
    steps = list(range(200, 200 + 10 * len(grads), 10))  # InternLM/xtuner issue 187: iterations 200-250
    return {"loss": pd.Series(losses, index=steps, dtype="float64"),
            "grad_norm": pd.Series(grads, index=steps, dtype="float64")}


def test_a_grad_norm_nan_at_the_last_two_points_with_a_finite_loss_after_is_a_warning():
    metrics = _grad_nan_at_the_end([3.06, 2.76, 2.76, 2.51, float("nan"), float("nan")],
                                   [2.7522, 2.6150, 2.6687, 2.7682, 2.5128, 2.4566])
    (found,) = detect_nonfinite_metrics(metrics, Thresholds())
    assert (found.kind, found.severity, found.step) == ("nonfinite_metric", "warning", 240)
    assert "did not reach the weights" in found.message


@pytest.mark.parametrize("grads, losses", [
    # the last point only: no loss logged after the NaN gradient to show the weights survived it (zai-org/GLM-4 #174)
    ([3.06, 2.76, 2.76, 2.51, 2.6, float("nan")], [2.75, 2.61, 2.66, 2.76, 2.51, 2.45]),
    # the loss after it is 0.0: HF's NaN filter's mark of a window of NaN losses
    ([3.06, 2.76, 2.76, 2.51, float("nan"), float("nan")], [2.75, 2.61, 2.66, 2.76, 2.51, 0.0]),
    # non-finite for many points to the end (InternLM/xtuner issue 658): updates skipped for good
    ([3.06, 2.76, 2.76] + [float("nan")] * 5, [0.69, 0.65, 0.67, 0.70, 0.71, 0.65, 0.65, 0.68]),
])
def test_a_grad_norm_nan_to_the_end_without_that_evidence_stays_an_error(grads, losses):
    (found,) = detect_nonfinite_metrics(_grad_nan_at_the_end(grads, losses), Thresholds())
    assert found.severity == "error"
