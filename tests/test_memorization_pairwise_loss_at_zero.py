"""Tests of the memorization rule: a pairwise or supervised loss at zero after many epochs.

From review day 9, judge second pass (batches AQ4 and AQ5): each test fails on the code before its change; each
change also has a test where its rule must not fire. Folder names avoid the words the profile reads in names."""
from __future__ import annotations

import json

import forensics


# ---- change 2: a pairwise preference loss at exactly 0 after several epochs is the pairs memorized ------------------


def _trainer_notebook(folder, config_class: str, trainer_class: str, losses: list[float], epochs: float):
    """An executed notebook of a TRL trainer logging every step: its arguments cell, the notebook callback's HTML
    table (Step / Training Loss, no rewards/* columns) and the closing TrainOutput."""
    n = len(losses)
    rows = "".join(f"    <tr>\n      <td>{i}</td>\n      <td>{v:.6f}</td>\n    </tr>\n"
                   for i, v in enumerate(losses, 1))
    html = (f"\n    <div>\n      \n      <progress value='{n}' max='{n}' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      [{n}/{n} 53:55, Epoch {int(epochs)}/{int(epochs) + 6}]\n"
            "    </div>\n    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
            "      <th>Step</th>\n      <th>Training Loss</th>\n    </tr>\n  </thead>\n  <tbody>\n" + rows
            + "  </tbody>\n</table><p>")
    mean = sum(losses) / n
    result = (f"TrainOutput(global_step={n}, training_loss={mean}, metrics={{'train_runtime': 3257.7, "
              f"'train_samples_per_second': 0.982, 'train_steps_per_second': 0.061, 'total_flos': 0.0, "
              f"'train_loss': {mean}, 'epoch': {epochs}}})")
    source = (f"from trl import {trainer_class}, {config_class}\n"
              f"training_args = {config_class}(per_device_train_batch_size=4, gradient_accumulation_steps=4, "
              f"learning_rate=5e-5, max_steps={n}, logging_steps=1, output_dir='out', bf16=True)\n"
              f"trainer = {trainer_class}(model, args=training_args, train_dataset=dataset, tokenizer=tokenizer)\n"
              "trainer.train()")
    cell = {"cell_type": "code", "execution_count": 6, "metadata": {}, "source": source, "outputs": [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/plain": "<IPython.core.display.HTML object>", "text/html": html}},
        {"output_type": "execute_result", "execution_count": 6, "metadata": {}, "data": {"text/plain": result}}]}
    folder.mkdir(parents=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                    "nbformat_minor": 5}))
    return folder


def _down_to_zero(n: int = 200, rate: float = 0.12) -> list[float]:
    """A pairwise loss from ln 2 down smoothly, printed with 6 decimals: 0.000000 over the last two thirds."""
    return [round(0.6931 * 2.718281828 ** (-rate * i), 6) for i in range(n)]


def test_pairwise_loss_at_zero_after_many_epochs_is_memorization(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "DPOConfig", "DPOTrainer", _down_to_zero(), 28.64)
    analysis = forensics.analyze(run)
    assert analysis.run_profile.objective == "preference"
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "memorization"
    assert 40 <= analysis.first_incident.step <= 80
    assert not any(f.kind == "zero_loss_unexplained" for f in analysis.findings)


def test_pairwise_loss_at_zero_within_the_first_epochs_stays_unexplained(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "DPOConfig", "DPOTrainer", _down_to_zero(), 2.5)
    analysis = forensics.analyze(run)
    assert analysis.first_incident.kind == "zero_loss_unexplained"


def test_supervised_loss_at_zero_after_many_epochs_stays_unexplained(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "SFTConfig", "SFTTrainer", _down_to_zero(), 28.64)
    analysis = forensics.analyze(run)
    assert analysis.run_profile.objective == "sft"
    assert analysis.first_incident.kind == "zero_loss_unexplained"
