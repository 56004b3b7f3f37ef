"""Tests of analyzers/lr_lag.py: a lag already there at the first point is no skipped update.

From review rev19 of the day's readers and rules, each finding mended."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule


PEAK, TOTAL = 1e-5, 1000
FP16_LINEAR = {"fp16": True, "lr_scheduler_type": "linear", "learning_rate": PEAK, "warmup_steps": 0, "warmup_ratio": 0.0}


def test_a_learning_rate_as_far_behind_at_its_first_point_as_at_its_last_is_no_skipped_update():
    """A DeepSpeed WarmupDecayLR's 10 warm-up steps under a Trainer that says linear, no warm-up: the rate is 10 steps
    behind the Trainer's schedule from the first logged point to the last, as no skipped update leaves it."""
    steps = np.arange(10, 1000, 10)
    lr = pd.Series(np.float32(PEAK * (1 - (steps - 10) / TOTAL)).astype("float64"), index=steps)
    assert detect_skips_from_lr_lag({"learning_rate": lr}, linear_fp16_schedule(FP16_LINEAR)) == []


def test_a_lag_that_grows_after_the_first_point_is_still_read():
    steps = np.arange(10, 1000, 10)
    lag = np.where(steps < 500, 10, np.where(steps < 510, 15, 20))
    lr = pd.Series(np.float32(PEAK * (1 - (steps - lag) / TOTAL)).astype("float64"), index=steps)
    (found,) = detect_skips_from_lr_lag({"learning_rate": lr}, linear_fp16_schedule(FP16_LINEAR))
    assert found.kind == "skipped_steps"
