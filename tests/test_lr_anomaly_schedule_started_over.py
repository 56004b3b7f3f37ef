"""Tests of analyzers/lr_anomaly.py: a schedule started over mid-decay.

Session 12: a learning-rate schedule that starts over in the middle of its decay (a resume that loaded the weights
but not the scheduler's state) is an `lr_anomaly` warning; planned schedules stay silent."""
import numpy as np
import pandas as pd

from forensics.analyzers.lr_anomaly import detect_lr_anomalies
from forensics.config import Thresholds


def _lr(values, every=50):
    return {"learning_rate": pd.Series(values, index=np.arange(1, len(values) + 1) * every, dtype="float64")}


def _linear(peak, n, total):
    return [peak * (1 - k / total) for k in range(n)]


def test_a_linear_decay_back_at_its_peak_mid_run_is_a_schedule_started_over():
    # 5e-5 decaying by 0.44% a point for 20 points, then back at 5e-5 and decaying on the same slope to the end
    values = _linear(5e-5, 20, 227) + _linear(5e-5, 207, 227)
    found = detect_lr_anomalies(_lr(values), Thresholds())
    assert [f.kind for f in found] == ["lr_anomaly"]
    assert found[0].step == 21 * 50 and found[0].evidence["started_over"]
    assert "started over in the middle of its decay" in found[0].message


def test_a_plain_linear_decay_with_warmup_stays_silent():
    values = [5e-5 * k / 10 for k in range(1, 11)] + _linear(5e-5, 200, 200)
    assert detect_lr_anomalies(_lr(values), Thresholds()) == []


def test_a_cosine_with_warm_restarts_after_running_down_stays_silent():
    cycle = [5e-5 * 0.5 * (1 + np.cos(np.pi * k / 40)) for k in range(41)]
    assert detect_lr_anomalies(_lr(cycle * 4), Thresholds()) == []


def test_a_small_upward_wobble_in_a_decay_is_not_a_restart():
    values = _linear(5e-5, 30, 100)
    values[20] = values[19] * 1.01  # a logged rate rounded up once
    assert detect_lr_anomalies(_lr(values), Thresholds()) == []
