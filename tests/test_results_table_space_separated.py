"""Tests of the results-table reader: a space-separated model card table.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3)."""
from __future__ import annotations


# ---- the model card's results table as a web page shows it: cells separated by spaces ----------------------------------


def test_a_space_separated_model_card_table_is_read_as_the_trainers_results(tmp_path):
    import forensics
    run = tmp_path / "run"
    run.mkdir()
    rows = ["Training Loss Epoch Step Validation Loss Rouge1 Rouge2 Gen Len",
            "No log 1.0 1209 3.1603 17.3175 8.3009 18.2"]
    rows += [f"{3.4 - 0.05 * e:.4f} {e + 1:.1f} {1209 * (e + 1)} {3.16 - 0.02 * e:.4f} 17.3 8.3 18.0" for e in range(1, 8)]
    (run / "train.log").write_text("\n".join(rows) + "\n")
    analysis = forensics.analyze(run)
    assert analysis.timeline.series("eval_loss").index.tolist() == [1209 * e for e in range(1, 9)]
    assert len(analysis.timeline.series("loss")) == 7 and "eval_gen_len" in analysis.timeline.metrics
    assert analysis.run_profile.framework == "hf_trainer"


def test_prose_that_starts_like_the_spaced_header_is_no_table():
    from forensics.ingest.results_table import header_columns
    assert header_columns("Training Loss Epoch Step Validation Loss, as the card shows, is what we look at.") is None
    assert header_columns("Step 10 Training Loss 2.3") is None
