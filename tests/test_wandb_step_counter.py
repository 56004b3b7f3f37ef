"""Tests of the W&B readers' step counter (ingest/wandb.py, ingest/wandb_files.py): counters that
are no step.

From review rev19 of the day's readers and rules, each finding mended."""
from __future__ import annotations

import math
import pytest
from forensics.ingest.wandb import own_counter
from forensics.ingest.wandb_files import summary_frame


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e300, -5])
def test_a_summary_counter_that_is_no_step_falls_back_to_wandbs_own(bad):
    frame = summary_frame({"iter": bad, "_step": 40, "loss": 1.5})
    assert set(frame["step"]) == {40}


def test_a_step_column_repeated_on_every_batchs_row_is_no_counter():
    rows = [{"step": epoch, "train_loss": 2.0 - 0.001 * i, "_step": i} for i, epoch in enumerate([0] * 50 + [1] * 50)]
    assert own_counter(rows) is None


def test_a_table_row_without_the_counter_does_not_undo_it():
    rows = [{"iter": 10 * i, "loss": 3 - i / 50, "_step": i} for i in range(20)] + [{"samples": {"_type": "table"},
                                                                                      "_step": 20}]
    assert own_counter(rows) == "iter"


def test_a_huge_counter_is_no_step():
    rows = [{"iter": 10 * i, "loss": 3 - i / 50, "_step": i} for i in range(20)] + [{"iter": 1e300, "loss": 2.0}]
    assert own_counter(rows) is None
