"""Tests of a store's report: notes told from files read in part.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations


def test_a_store_report_tells_notes_from_files_read_in_part():
    """`forensics analyze STORE` (several W&B / MLflow runs): a note on how a file was read is not a file left out."""
    from types import SimpleNamespace

    from forensics.findings import Skipped
    from forensics.report.store_text import store_text

    run = SimpleNamespace(run_id="abc123", name="abc123", kind="wandb", status="finished")
    store = SimpleNamespace(runs=[SimpleNamespace(run=run, analysis=None, reason="no history")], path="wandb",
                            skipped=(Skipped("wandb/run-1/files/output.log", "two writers, de-duplicated", note=True),))
    text = store_text(store)
    assert "could not be read in full" not in text and "1 note on how the records were taken" in text, text
