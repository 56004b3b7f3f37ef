"""A grad_norm non-finite in bursts, finite again after each, the training loss finite and falling throughout, and
non-finite once more at the log's last point: the same event again, a warning (a bf16 QLoRA with NaN norms at 23
scattered steps through its last, the loss falling 0.29 -> 0.24). The message says where it is non-finite, not
"from step N on" where it came back after N. A grad_norm non-finite to the end from its first bad point, or with a
NaN loss after the bursts, stays an error."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.nonfinite import detect_nonfinite_metrics
from forensics.config import Thresholds

STEPS = np.arange(10, 710, 10)
NAN = float("nan")


def _run(bad_steps, loss_nan_from=None):
    grad = pd.Series([NAN if s in bad_steps else 1.2 + 0.1 * np.sin(s) for s in STEPS], index=STEPS)
    loss = pd.Series(np.linspace(0.29, 0.24, len(STEPS)), index=STEPS)
    if loss_nan_from is not None:
        loss[loss.index >= loss_nan_from] = NAN
    return {"grad_norm": grad, "loss": loss}


def _grad_finding(metrics):
    found = [f for f in detect_nonfinite_metrics(metrics, Thresholds()) if f.metric == "grad_norm"]
    assert len(found) == 1
    return found[0]


BURSTS = {100, 110, 120, 130, 280, 290, 300, 310, 450, 460, 470, 480}


def test_a_burst_again_at_the_end_after_bursts_it_came_back_from_is_a_warning():
    f = _grad_finding(_run(BURSTS | {700}))
    assert f.severity == "warning" and f.step == 100
    assert "from step 100 on" not in f.message and "finite again between them" in f.message
    assert "from step 700 on" in f.message


def test_one_earlier_burst_is_no_pattern_and_the_last_stays_an_error():
    f = _grad_finding(_run({280, 290, 300, 310, 700}))
    assert f.severity == "error"
    assert "from step 280 on" not in f.message and "from step 700 on" in f.message


def test_earlier_updates_read_as_skipped_count_as_bursts_it_came_back_from():
    found = [f for f in detect_nonfinite_metrics(_run({50, 150, 250, 280, 290, 300, 310, 700}), Thresholds(),
                                                 skipped_steps=[50, 150, 250]) if f.metric == "grad_norm"]
    assert [f.severity for f in found] == ["warning"]


def test_non_finite_to_the_end_from_its_first_bad_point_stays_an_error():
    f = _grad_finding(_run(set(range(600, 710, 10))))
    assert f.severity == "error" and "from step 600 on" in f.message


def test_a_nan_loss_after_the_bursts_keeps_it_an_error():
    f = _grad_finding(_run(BURSTS | {700}, loss_nan_from=650))
    assert f.severity == "error"


def test_a_long_stretch_at_the_end_after_earlier_bursts_stays_an_error():
    f = _grad_finding(_run(BURSTS | {670, 680, 690, 700}))
    assert f.severity == "error"
