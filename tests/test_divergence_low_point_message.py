"""Tests of analyzers/divergence.py: the low point its message states.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* A divergence whose low is the log's first point states that point as the low (lit-gpt issue 628: 1.70, then
  10-12), not the centred median's mean of it and the jump (6.58)."""
from __future__ import annotations

import pandas as pd
from forensics.analyzers.divergence import detect_divergence
from forensics.config import Thresholds


# ---- the low a divergence message states -------------------------------------------------------------------------


_JUMP = [1.7019, 11.463, 11.7545, 11.5019, 11.4807, 12.1935, 10.022, 10.9364, 10.5513]


def test_a_divergence_from_the_logs_first_point_states_that_point_as_its_low():
    loss = pd.Series(_JUMP, index=range(1151, 1160), dtype="float64")
    (found,) = detect_divergence({"loss": loss}, Thresholds())
    assert found.kind == "divergence" and found.step == 1152
    assert "a low of about 1.702" in found.message and "6.582" not in found.message
    assert found.evidence["floor"] == 1.7019


def test_a_divergence_after_a_long_fall_states_the_smoothed_low_as_before():
    values = [3.0 - 0.05 * i for i in range(40)] + [6.0 + 0.01 * i for i in range(20)]
    (found,) = detect_divergence({"loss": pd.Series(values, index=range(10, 610, 10), dtype="float64")}, Thresholds())
    assert found.step == 410 and "a low of about 1.2 and" in found.message and found.evidence["floor"] == 1.2
