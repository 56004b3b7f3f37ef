"""Tests of ingest/console_param_counts.py: printed sizes that are no model's count read as none.

From review rev19 of the day's readers and rules, each finding mended."""
from __future__ import annotations

import pytest
from forensics.ingest.console_param_counts import parameter_count_said


_TITAN = "[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - Model llama3 debugmodel size: {} total parameters\n"


@pytest.mark.parametrize("size", [",,,,", "99,999,999,999,999,999,999", "0"])
def test_a_printed_size_that_is_no_models_count_is_no_size(size):
    assert "console_n_params" not in parameter_count_said(_TITAN.format(size))


def test_a_printed_titan_size_is_still_read():
    assert parameter_count_said(_TITAN.format("8,566,272"))["console_n_params"] == 8566272
