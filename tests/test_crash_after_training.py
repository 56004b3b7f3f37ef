"""A crash after train() returned (analyzers.crash `_trained_to_the_end`): the script's later stage failed, not the
training - an info finding, the status the training's own. From corpus batch AS100 (andres-villavicencio-dev's
Unsloth QLoRA: 33/33 steps, the closing summary and 'Training complete!', then CUDA out of memory in the GGUF export)."""
from __future__ import annotations

from pathlib import Path

import forensics

from test_crash import OOM, _dicts

CLOSING = "{'train_runtime': 235.16, 'train_samples_per_second': 2.258, 'train_steps_per_second': 0.14, " \
          "'train_loss': 1.049, 'epoch': 2.81}\nTraining complete!\nSaving LoRA adapter to ./out/lora\n"
CORPUS = Path(__file__).parent / "realworld"


def _crashes(path: Path) -> list:
    return [f for f in forensics.analyze(path).findings if f.kind == "run_crashed"]


def test_an_out_of_memory_error_after_trains_closing_summary_is_info_and_says_the_training_finished(tmp_path):
    (tmp_path / "output.log").write_text(_dicts(10, 300) + CLOSING + "Exporting to GGUF...\n" + OOM)
    (f,) = _crashes(tmp_path)
    assert (f.severity, f.evidence["after_training"]) == ("info", True)
    assert "training finished" in f.message and "not affected" in f.message
    assert forensics.analyze(tmp_path).status == "healthy"


def test_the_same_crash_with_no_closing_summary_stays_a_warning(tmp_path):
    (tmp_path / "output.log").write_text(_dicts(10, 300) + "Training complete? not yet\n" + OOM)
    (f,) = _crashes(tmp_path)
    assert f.severity == "warning" and "after_training" not in f.evidence


def test_a_closing_summary_of_an_earlier_launch_does_not_excuse_a_later_launchs_crash(tmp_path):
    """One console, two launches: the first finished at step 150, the second logged on to step 300 and crashed."""
    (tmp_path / "output.log").write_text(_dicts(10, 150) + CLOSING + _dicts(160, 300) + OOM)
    assert [f.severity for f in _crashes(tmp_path)] == ["warning"]


def test_the_corpus_run_whose_gguf_export_ran_out_of_memory_is_healthy():
    analysis = forensics.analyze(CORPUS / "andres-villavicencio-dev_smallville-agents")
    assert analysis.status == "healthy"
    assert [f.severity for f in analysis.findings if f.kind == "run_crashed"] == ["info"]
