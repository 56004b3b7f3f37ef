"""Tests of analyzers/overflow.py: a loss scale at or off its floor.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* Old Megatron-LM's step line, its fields without colons (` iteration N/ M | elapsed time per iteration (ms): T |
  learning rate X | lm loss X | loss scale X |`, THUDM/Chinese-Transformer-XL issue 7), is read field by field; a
  loss scale that fell under DeepSpeed's floor and then rose again is a storm the run came through (warning), not
  a run DeepSpeed stopped."""
from __future__ import annotations

import pandas as pd
from forensics.analyzers.overflow import detect_loss_scale_overflow
from forensics.config import Thresholds


def _scale(values: list[float]) -> dict:
    return {"loss_scale": pd.Series(values, index=[100 * (i + 4) for i in range(len(values))], dtype="float64")}


def test_a_loss_scale_that_rose_again_after_its_floor_is_a_warning():
    (found,) = detect_loss_scale_overflow(_scale([64, 8, 4, 4, 0.1, 0.1, 0.1, 0.1, 0.2]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("loss_scale_overflow", "warning", 500)
    assert "rose again" in found.message and "stops the run" not in found.message


def test_a_loss_scale_that_ends_at_its_floor_is_still_an_error():
    (found,) = detect_loss_scale_overflow(_scale([64, 8, 4, 1, 2, 1, 1]), Thresholds())
    assert (found.kind, found.severity) == ("loss_scale_overflow", "error")
