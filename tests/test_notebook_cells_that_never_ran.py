"""Cells that never ran are not the run's code: an uncounted, output-less cell among counted ones
(AliN75_Memorization's freeze cell), and, where every count was cleared, a script pasted below the training cell
(06Anirudh24_Always-On-Policy-Prompts-for-Efficient-RLHF's RewardTrainer)."""
from __future__ import annotations

import json
from pathlib import Path

import forensics


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


_TRAINING = _stream("".join(f"{{'loss': {2.5 - 0.03 * i}, 'grad_norm': 1.5, 'learning_rate': 5e-05, "
                            f"'epoch': {i / 40:.3f}}}\n" for i in range(1, 41)))
_LOAD = "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n" \
        "model = AutoModelForCausalLM.from_pretrained('gpt2-large')\n"
_FREEZE = "for p in model.parameters():\n    p.requires_grad = False\nfor p in model.transformer.h[5].parameters():\n" \
          "    p.requires_grad = True\n"
_TRAIN = "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\ntrainer.train()\n"


def _notebook(folder: Path, cells: list[tuple[str, list, int | None]]) -> Path:
    nb = {"cells": [{"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
                     "outputs": outputs} for source, outputs, count in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fine-tuning.ipynb").write_text(json.dumps(nb, indent=1))
    return folder


def test_a_freeze_cell_that_never_ran_between_counted_cells_leaves_a_full_fine_tune(tmp_path):
    _notebook(tmp_path, [(_LOAD, [], 9), (_FREEZE, [], None), (_TRAIN, [_TRAINING], 10)])
    assert forensics.analyze(tmp_path).run_profile.method == "full"


def test_a_freeze_cell_that_ran_still_says_the_model_was_not_trained_whole(tmp_path):
    _notebook(tmp_path, [(_LOAD, [], 9), (_FREEZE, [], 10), (_TRAIN, [_TRAINING], 11)])
    assert forensics.analyze(tmp_path).run_profile.method == "unknown"


def test_counts_cleared_the_trainer_of_the_training_cell_beats_a_script_pasted_below_it(tmp_path):
    """Every count cleared: the SFTTrainer cell shows the run's table; a RewardTrainer script below it, with a LoRA
    config and no output, ran after it or never."""
    _notebook(tmp_path, [
        ("from transformers import TrainingArguments\nfrom trl import SFTTrainer\n"
         "args = TrainingArguments(output_dir='sft', num_train_epochs=4)\n", [], None),
        ("trainer = SFTTrainer('openai-community/gpt2-medium', args=args, train_dataset=ds, packing=True)\n"
         "trainer.train()\n", [_TRAINING], None),
        ("from peft import LoraConfig\nfrom trl import RewardConfig, RewardTrainer\n"
         "trainer = RewardTrainer(model=model, args=RewardConfig(output_dir='rm'), peft_config=LoraConfig(r=8))\n"
         "trainer.train()\n", [], None),
        ("print(generator('The man worked as a'))\n", [_stream("[{'generated_text': 'The man worked as a cook'}]\n")],
         None)])
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.objective, profile.method) == ("sft", "full")


def test_counts_cleared_an_adapter_set_up_above_the_training_cell_still_counts(tmp_path):
    """Above the training cell, with every count cleared, a LoRA set-up is read as run: no full fine-tune."""
    _notebook(tmp_path, [
        ("from peft import LoraConfig\nfrom trl import SFTTrainer\npeft_config = LoraConfig(r=8)\n", [], None),
        ("trainer = SFTTrainer('openai-community/gpt2-medium', peft_config=peft_config)\ntrainer.train()\n",
         [_TRAINING], None)])
    assert forensics.analyze(tmp_path).run_profile.method == "lora"


_TEMPLATE_RUN = _stream("".join(f"{{'loss': {1.0 + 0.2 * (i % 3)}, 'grad_norm': 1.0, 'learning_rate': 2e-04, "
                                f"'epoch': {i / 100:.3f}}}\n" for i in range(1, 31)))


def test_a_training_saved_in_a_cell_that_never_ran_does_not_displace_the_counted_run(tmp_path):
    """ucaokylong_LLM_learning: the owner's run is counted; the template's 30 flat steps, output kept in a cell with
    no execution count further down, are not the run judged."""
    _notebook(tmp_path, [(_LOAD, [], 1), (_TRAIN, [_TRAINING], 2), (_TRAIN, [_TEMPLATE_RUN], None)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert analysis.timeline.frame["step"].max() == 40


def test_the_last_training_is_judged_where_every_training_cell_ran(tmp_path):
    _notebook(tmp_path, [(_LOAD, [], 1), (_TRAIN, [_TRAINING], 2), (_TRAIN, [_TEMPLATE_RUN], 3)])
    assert forensics.analyze(tmp_path).timeline.frame["step"].max() == 30
