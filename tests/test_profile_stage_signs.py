"""Run-profile signs from what a run names or counts of itself (corpus batches AS41, AS44, AS49):
* MiniMind's `Model Params: X M` / `Trainable Params: Y M` pair, equal within its rounding: every weight trained
  (jingyaogong_minimind_issue634 / issue772); its train_lora.py's own LoRA count after it: a LoRA;
* the Python script a console's launch command runs names the stage (`train_pretrain.py`), where it names one;
* Unsloth's UnslothTrainer / UnslothTrainingArguments (its subclasses of TRL's SFTTrainer and SFTConfig): sft, where
  no name of the run says continued pre-training (Ajith-Kumar-Nelliparthi_Unsloth-FineTuning);
* a freeze under `if name.split('.') == 'encoder':` (a list compared with a string: never true) freezes nothing
  (mitchgauthier_nlp_6120_abs_summarization);
* a masked-LM head over an alphabet of its own smaller than 32 symbols, no trained model named: trained from scratch
  (EnthusiasticTeslim_CSC7343-FinalProject).
Each with a run of the same shape where the sign must stay silent. Every run is written under a folder named `run`:
the test's own folder name would otherwise be read as the run's name.
"""
from __future__ import annotations

import json
import math

import pytest

import forensics


def _minimind_console(folder, head: list[str]) -> None:
    """A MiniMind console (trainer_utils.init_model's counts, then train_epoch's lines): `head`, then ten
    `Epoch:[1/1](N/44160), loss: ...` lines falling from 7.46 to 5.51 (the first 2% of a pre-training)."""
    losses = [7.4568, 6.9873, 6.8830, 6.7360, 6.5560, 6.2440, 5.9510, 5.7510, 5.5780, 5.5110]
    lines = head + [f"Epoch:[1/1]({100 * (i + 1)}/44160), loss: {loss:.4f}, logits_loss: {loss:.4f}, aux_loss: 0.0000, "
                    f"lr: 0.00049{999 - i:03d}, epoch_time: {85.0 - i:.1f}min" for i, loss in enumerate(losses)]
    folder.mkdir()
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def test_minimind_printing_its_trainable_count_equal_to_the_model_is_profiled_as_training_every_weight(tmp_path):
    _minimind_console(tmp_path / "run", ["Model Params: 63.91M", "Trainable Params: 63.912M"])
    profile = forensics.analyze(tmp_path / "run").run_profile
    assert profile.method == "full" and "minimind banner" in profile.evidence["method"]


def test_minimind_trainable_count_under_the_model_does_not_say_every_weight_trained(tmp_path):
    _minimind_console(tmp_path / "run", ["Model Params: 63.91M", "Trainable Params: 12.300M"])
    assert forensics.analyze(tmp_path / "run").run_profile.method != "full"


def test_minimind_lora_counted_after_the_whole_model_is_profiled_as_lora(tmp_path):
    """train_lora.py: init_model counts every weight trainable before apply_lora, then counts the LoRA itself."""
    _minimind_console(tmp_path / "run", ["Model Params: 25.83M", "Trainable Params: 25.830M", "LLM 总参数量: 26.092 M",
                                         "LoRA 参数量: 0.262 M", "LoRA 参数占比: 1.00%"])
    assert forensics.analyze(tmp_path / "run").run_profile.method == "lora"


@pytest.mark.parametrize("script, objective", [("train_pretrain.py", "pretrain"), ("trainer/train_full_sft.py", "sft")])
def test_the_script_a_consoles_launch_command_runs_names_the_stage(tmp_path, script, objective):
    _minimind_console(tmp_path / "run", [f"CUDA_VISIBLE_DEVICES=5 python {script} --hidden_size 256",
                                         "Model Params: 7.28M", "Trainable Params: 7.279M"])
    profile = forensics.analyze(tmp_path / "run").run_profile
    assert profile.objective == objective and script.rsplit("/", 1)[-1] in profile.evidence["objective"]


@pytest.mark.parametrize("script", ["train.py", "pretrain_and_sft.py"])
def test_a_script_name_that_names_no_stage_or_two_says_no_objective(tmp_path, script):
    _minimind_console(tmp_path / "run", [f"python {script} --hidden_size 256", "Model Params: 7.28M",
                                         "Trainable Params: 7.279M"])
    assert forensics.analyze(tmp_path / "run").run_profile.objective == "unknown"


def _trainer_notebook(folder, name: str, code: str) -> None:
    """A notebook `name` whose one run cell is `code` followed by `trainer.train()`, with the Trainer's progress
    table (40 steps, the loss falling from 2.1 to 1.3) as its output."""
    rows = "".join(f"<tr><td>{s}</td><td>{2.1 - 0.02 * s:.6f}</td></tr>" for s in range(1, 41))
    table = ("<div><progress value='40' max='40'></progress> [40/40 02:00, Epoch 0/1]</div><table border=\"1\" "
             "class=\"dataframe\"><thead><tr style=\"text-align: left;\"><th>Step</th><th>Training Loss</th></tr>"
             f"</thead><tbody>{rows}</tbody></table><p>")
    notebook = {"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": [{
        "cell_type": "code", "execution_count": 9, "metadata": {}, "source": [code + "\ntrainer_stats = trainer.train()"],
        "outputs": [{"output_type": "display_data", "metadata": {},
                     "data": {"text/html": [table], "text/plain": ["<IPython.core.display.HTML object>"]}}]}]}
    folder.mkdir()
    (folder / name).write_text(json.dumps(notebook))


_UNSLOTH_CODE = """from unsloth import FastLanguageModel, UnslothTrainer, UnslothTrainingArguments
model, tokenizer = FastLanguageModel.from_pretrained(model_name="microsoft/phi-2", max_seq_length=2048, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, target_modules=["q_proj", "v_proj"])
trainer = UnslothTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, dataset_text_field="Text",
                         max_seq_length=2048, args=UnslothTrainingArguments(per_device_train_batch_size=4,
                         learning_rate=3e-4, embedding_learning_rate=5e-6, max_steps=40, fp16=True, output_dir="outputs"))"""


def test_unsloths_own_trainer_arguments_are_profiled_as_supervised_fine_tuning(tmp_path):
    _trainer_notebook(tmp_path / "run", "Unsloth.ipynb", _UNSLOTH_CODE)
    profile = forensics.analyze(tmp_path / "run").run_profile
    assert profile.objective == "sft" and "UnslothTrainingArguments" in profile.evidence["objective"]


def test_unsloths_own_trainer_in_a_notebook_named_for_continued_pretraining_stays_continued_pretraining(tmp_path):
    _trainer_notebook(tmp_path / "run", "Continued_pretraining_Spanish.ipynb", _UNSLOTH_CODE)
    assert forensics.analyze(tmp_path / "run").run_profile.objective == "pretrain"


_BART_CODE = """from transformers import AutoModelForSeq2SeqLM, Trainer, TrainingArguments
model = AutoModelForSeq2SeqLM.from_pretrained("facebook/bart-base")
for name, param in model.base_model.named_parameters():
  if {test}:
    param.requires_grad = False
  else:
    param.requires_grad = True
trainer = Trainer(model=model, args=TrainingArguments(output_dir="out", num_train_epochs=10, learning_rate=1e-5),
                  train_dataset=train_dataset)"""


def test_a_freeze_under_a_split_list_compared_with_a_string_freezes_nothing(tmp_path):
    _trainer_notebook(tmp_path / "run", "bart_summaries.ipynb", _BART_CODE.format(test="name.split('.') == 'encoder'"))
    assert forensics.analyze(tmp_path / "run").run_profile.method == "full"


def test_a_freeze_under_a_test_that_can_hold_still_sets_weights_aside(tmp_path):
    _trainer_notebook(tmp_path / "run", "bart_summaries.ipynb", _BART_CODE.format(test="'encoder' in name.split('.')"))
    assert forensics.analyze(tmp_path / "run").run_profile.method != "full"


def _masked_lm_run(folder, name: str | None) -> None:
    """A Trainer checkpoint of a BertForMaskedLM over a 25-symbol alphabet (config.json as transformers 4.31 saves a
    model built from a BertConfig; with `name`, one loaded from it) and a loss logged every 500 steps."""
    folder.mkdir()
    config = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 25, "hidden_size": 512,
              "num_hidden_layers": 8, "num_attention_heads": 8, "intermediate_size": 2048,
              "max_position_embeddings": 64, "torch_dtype": "float32", "transformers_version": "4.31.0"}
    if name is not None:
        config["_name_or_path"] = name
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    history = [{"epoch": i / 10, "learning_rate": 2e-5 * (1 - i / 20), "loss": round(1.2 * math.exp(-i / 8) + 0.9, 4),
                "step": 500 * i} for i in range(1, 11)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 5000, "max_steps": 6524, "epoch": 1.0,
                                                           "logging_steps": 500, "log_history": history}))


def test_a_masked_lm_over_its_own_25_symbol_alphabet_is_profiled_as_trained_from_scratch(tmp_path):
    _masked_lm_run(tmp_path / "run", name=None)
    profile = forensics.analyze(tmp_path / "run").run_profile
    assert profile.objective == "pretrain" and "25-token vocabulary" in profile.evidence["objective"]


def test_a_masked_lm_over_25_symbols_loaded_from_a_named_model_is_not_profiled_as_trained_from_scratch(tmp_path):
    _masked_lm_run(tmp_path / "run", name="someone/dna-bert-25")
    profile = forensics.analyze(tmp_path / "run").run_profile
    # its masked-LM head still says masked-token training (further pre-training of the named model), not a fresh start
    assert "25-token vocabulary" not in profile.evidence.get("objective", "")
    assert "from scratch" not in profile.evidence.get("objective", "")
