"""Tests of a README's log tail: dated by its epochs, its whole-run mean.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3)."""
from __future__ import annotations


# ---- a README holding the tail of a Trainer log (string-valued dicts), its finished bar after the summary ----------------


def _readme_tail(folder, whole_run_mean: float):
    folder.mkdir()
    rows = [f"{{'loss': '{0.55 + (0.02 if i % 2 else -0.02):.4f}', 'grad_norm': '0.08', 'learning_rate': "
            f"'{9.4e-6 - i * 6.7e-7:.3e}', 'epoch': '{(160 + 10 * i) / 393.75:.4f}'}}" for i in range(15)]
    rows += [f"{{'train_runtime': '1063', 'train_loss': '{whole_run_mean}', 'epoch': '0.7619'}}",
             "100%|" + "\u2588" * 20 + "| 300/300 [17:42<00:00,  3.54s/it]"]
    (folder / "README.md").write_text("# SQL fine-tune\n\n## Training output\n\n```\n" + "\n".join(rows) + "\n```\n")
    return folder


def test_a_readme_log_tail_is_dated_by_its_epochs_and_its_whole_run_mean_shows_learning(tmp_path):
    import forensics
    analysis = forensics.analyze(_readme_tail(tmp_path / "run", 0.6024))
    assert analysis.timeline.series("loss").index.tolist()[:2] == [160, 170]
    assert analysis.status == "healthy" and analysis.learning.metric == "train_loss"


def test_a_readme_log_tail_whose_whole_run_mean_is_no_higher_shows_no_learning(tmp_path):
    import forensics
    analysis = forensics.analyze(_readme_tail(tmp_path / "run", 0.551))
    assert analysis.first_incident.kind == "no_learning_evidence"
