"""Tests of the run profile's framework: a notebook importing SFTTrainer but calling Trainer.

From the review of the day's changes 8776af3..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

from support.notebook_and_findings import _analyze, _notebook


def test_a_notebook_importing_sfttrainer_but_calling_a_plain_trainer_names_no_trl_trainer(tmp_path):
    dicts = "".join(f"{{'loss': {2.5 - s / 20:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {s / 30:.2f}}}\n"
                    for s in range(1, 31))
    folder = _notebook(tmp_path / "nb", [
        ("from trl import SFTTrainer\nfrom transformers import Trainer, TrainingArguments", ""),
        ("trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=ds)\n"
         "trainer.train()", dicts)])
    assert "SFTTrainer" not in str(_analyze(folder).run_profile.evidence)
