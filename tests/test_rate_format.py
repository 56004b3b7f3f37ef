"""Learning rates are written as rates: never as the whole number `format_number` writes a loss scale or a count as.

From ChristianPE1_transformer-test (tests/realworld/PROVENANCE.md): a plateau scheduler multiplied the rate by 1.05
every epoch, 0.015 at step 1 to 201635360.0 at step 500, which the advice printed as "201635360"."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.analyzers.metrics import format_number, format_rate

CASE = Path(__file__).parent / "realworld" / "ChristianPE1_transformer-test"


def test_a_huge_whole_valued_rate_is_written_as_a_float():
    assert format_rate(201635360.0) == "2.016e+08"


def test_usual_rates_read_as_before():
    assert [format_rate(v) for v in (0.0002, 1.546, 2e-05)] == [format_number(v) for v in (0.0002, 1.546, 2e-05)]


def test_a_loss_scale_is_still_written_whole():
    """The guard: counts and loss scales keep their whole form."""
    assert format_number(65536.0) == "65536"


def test_the_advice_on_a_rate_that_never_stopped_rising_writes_it_as_a_rate():
    advice = " ".join(c.suggestion for c in forensics.analyze(CASE).causes)
    assert "2.016e+08 at the last logged step 500" in advice
    assert "201635360" not in advice


def test_a_learning_rate_jump_to_a_huge_whole_value_is_written_as_a_rate():
    """The learning-rate anomaly's message writes its rates as rates too (review 32d: only the causes did)."""
    import numpy as np
    import pandas as pd

    from forensics.analyzers.lr_anomaly import detect_lr_anomalies
    from forensics.config import Thresholds

    steps = np.arange(10, 210, 10)
    rates = np.r_[np.full(10, 0.0028), np.full(10, 200000000.0)]
    metrics = {"learning_rate": pd.Series(rates, index=steps), "loss": pd.Series(np.full(20, 2.0), index=steps)}
    (jump,) = [f for f in detect_lr_anomalies(metrics, Thresholds()) if "jumps" in f.message]
    assert "2e+08" in jump.message and "200000000" not in jump.message, jump.message
