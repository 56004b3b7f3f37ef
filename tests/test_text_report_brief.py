"""Tests of the text report's brief (report/text.py) after the advice rows.

The brief text after the day's advice rows (report/text.py, causes/warmup.py warm_up_seen).

* A logged rate that leapt 3333x above its schedule in one step (sample_runs/lr_blowup: 0.003 -> 10 at step 20) is
  no warm-up: the advice must not tell the run to "keep the warm-up (the logged rate rose from 0.003 to 10)".
  A warm-up that ramps (tests/test_causes_advice_warm_up_clipping_and_stages.py) is still kept.
* The damaged checkpoint is said by the Damaged blocks and Last good rows: the chain does not say it again.
"""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.report.text import analysis_text


SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"


def test_a_rate_that_leapt_above_its_schedule_is_no_warm_up_to_keep():
    a = forensics.analyze(SAMPLES / "lr_blowup")
    (lr,) = [c for c in a.causes if c.cause == "lr_too_high"]
    assert "keep the warm-up" not in lr.suggestion, lr.suggestion
    assert lr.suggestion.startswith("Lower the learning rate"), lr.suggestion


def test_the_damaged_checkpoint_is_said_once_in_the_brief_text():
    text = analysis_text(forensics.analyze(SAMPLES / "nan_masked"))
    rows = [line.split("  ")[0] for line in text.splitlines() if "checkpoint-40" in line]
    assert rows == ["Damaged blocks", "Last good"], text
