"""A training_args file whose logging_steps is absurdly large (a damaged JSON, 1e308) states no logging interval:
read as none, never an OverflowError."""
from __future__ import annotations

from forensics.ingest.stated_logging import _interval


def test_a_logging_steps_past_a_billion_is_no_interval():
    assert _interval({"logging_steps": 1e308}) is None


def test_an_ordinary_logging_steps_is_read():
    assert _interval({"logging_steps": 10.0}) == 10
