"""Tests of run discovery: a console saved with no suffix under any name.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import forensics


def test_a_console_saved_with_no_suffix_under_any_name_is_read(tmp_path):
    """JunyiJ's `dpo_train_20260105_1`: a captured console named by its date, no suffix; only a few bare names
    (nohup, stdout, train_log) were sniffed, so the folder held 'no training logs'."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "dpo_train_20260105_1").write_text("".join(f"[step {s}] loss={0.69 - s / 1000:.4f}\n" for s in range(1, 61)))
    (run / "Makefile").write_text("all:\n\tpython train.py\n")
    a = forensics.analyze(run)
    assert len(a.timeline.series("loss")) == 60
