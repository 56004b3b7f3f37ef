"""Run-profile readings of where a run's model starts (branch fx-profile4): Unsloth's training banner over a LoRA
(supervised fine-tuning), a character model's first evaluation level with its training loss at ln(a small vocabulary)
(random weights), a Keras model trained by a GradientTape loop (every weight, in float32) and a trained T5 named only
by a notebook's code (a sequence-to-sequence fine-tune); each with a run of the same shape where the sign must not
fire. Every synthetic run is written under a folder named `run`: the test's own folder name would be read as the
run's name."""
from __future__ import annotations

import math
from pathlib import Path

import forensics
from forensics.ingest.notebook_code import code_values

CORPUS = Path(__file__).parent / "realworld"


def _run(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / name).write_text(text)
    return folder


_UNSLOTH_BANNER = (
    "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
    "   \\\\   /|    Num examples = 5,000 | Num Epochs = 1 | Total steps = 300\n"
    "O^O/ \\_/ \\    Batch size per device = 2 | Gradient accumulation steps = 4\n"
    "\\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8\n"
    ' "-____-"     Trainable parameters = {trainable} of 8,000,000,000 ({share} trained)\n')


def _unsloth_log(trainable: str, share: str) -> str:
    rows = "".join(f"{10 * i}\t{1.0 + 1.8 * math.exp(-i / 6):.6f}\n" for i in range(1, 31))
    return _UNSLOTH_BANNER.format(trainable=trainable, share=share) + " [300/300 10:00, Epoch 1/1]\n" \
        "Step\tTraining Loss\n" + rows


def test_an_unsloth_banner_over_a_lora_on_the_lm_loss_is_supervised_fine_tuning(tmp_path: Path):
    profile = forensics.analyze(_run(tmp_path, "train.log", _unsloth_log("41,943,040", "0.52%"))).run_profile
    assert (profile.method, profile.objective) == ("lora", "sft")


def test_an_unsloth_banner_training_a_third_of_the_model_says_no_objective(tmp_path: Path):
    # continued pre-training trains the embeddings and the head too (unslothai_unsloth_issue1145: 982M of 3B): no LoRA
    # the banner shows, no objective it says
    log = _unsloth_log("2,700,000,000", "33.75%")
    assert forensics.analyze(_run(tmp_path, "train.log", log)).run_profile.objective == "unknown"


def _loss_table(first_train: float, first_val: float, last: float) -> str:
    rows = [f"0 {first_train:.6f} {first_val:.6f}"]
    rows += [f"{i} {last + (first_val - last) * math.exp(-i / 4) - 0.05:.6f} "
             f"{last + (first_val - last) * math.exp(-i / 4):.6f}" for i in range(1, 30)]
    return "#epoch train_loss val_loss\n" + "\n".join(rows) + "\n"


def test_a_first_evaluation_level_with_training_at_a_character_guess_that_halves_is_from_scratch(tmp_path: Path):
    # danis-b_YodaGPT's shape: train 4.3513 / val 4.3519 at row 0 (ln 64 = 4.16), val 1.27 at the end
    profile = forensics.analyze(_run(tmp_path, "losses.txt", _loss_table(4.3513, 4.3519, 1.27))).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")


def test_a_first_evaluation_apart_from_the_training_loss_is_no_sign_of_random_weights(tmp_path: Path):
    # the first row after an epoch of learning: the two losses already differ (here by 6%)
    profile = forensics.analyze(_run(tmp_path, "losses.txt", _loss_table(4.10, 4.3519, 1.27))).run_profile
    assert (profile.method, profile.objective) == ("unknown", "unknown")


def test_a_first_evaluation_level_with_training_that_does_not_halve_is_no_sign_of_random_weights(tmp_path: Path):
    # a pretrained model's loss on its fine-tuning text: the same on both splits before training, then a little lower
    profile = forensics.analyze(_run(tmp_path, "losses.txt", _loss_table(3.60, 3.61, 3.05))).run_profile
    assert profile.objective == "unknown"


def _cell(source: str, count: int = 1) -> dict:
    return {"cell_type": "code", "source": source, "execution_count": count, "outputs": []}


_KERAS_MODEL = ("import tensorflow as tf\n"
                "inputs = tf.keras.layers.Input(shape=(None,))\n"
                "outputs = tf.keras.layers.Dense(100, activation='softmax')(tf.keras.layers.Embedding(100, 16)(inputs))\n"
                "model = tf.keras.Model(inputs=inputs, outputs=outputs)\n"
                "optimizer = tf.keras.optimizers.Adam(learning_rate=1e-4)\n")
_TAPE_LOOP = ("for x, y in data:\n"
              "    with tf.GradientTape() as tape:\n"
              "        loss = loss_fn(y, model(x))\n"
              "    grads = tape.gradient(loss, model.trainable_variables)\n"
              "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n")


def test_a_keras_model_trained_by_a_gradient_tape_loop_trains_every_weight_in_fp32():
    said = code_values([_cell(_KERAS_MODEL), _cell(_TAPE_LOOP, 2)], "")
    assert (said.get("method"), said.get("precision.default_fp32")) == ("full", True)


def test_a_gradient_tape_loop_with_a_frozen_layer_or_a_mixed_policy_says_neither():
    frozen = code_values([_cell(_KERAS_MODEL + "model.layers[1].trainable = False\n"), _cell(_TAPE_LOOP, 2)], "")
    mixed = code_values([_cell("tf.keras.mixed_precision.set_global_policy('mixed_float16')\n" + _KERAS_MODEL),
                         _cell(_TAPE_LOOP, 2)], "")
    assert frozen.get("method") is None and "precision.default_fp32" not in mixed


def _t5_notebook(tmp_path: Path, model_class: str, name: str) -> Path:
    import json
    cells = [_cell(f"from transformers import {model_class}\nimport torch\n"
                   f"model = {model_class}.from_pretrained('{name}')\n"
                   "optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)\n"),
             _cell("for epoch in range(3):\n"
                   "    for i, (x, y) in enumerate(loader):\n"
                   "        loss = model(input_ids=x, labels=y).loss\n"
                   "        loss.backward()\n        optimizer.step()\n"
                   "        if i % 50 == 0:\n"
                   "            print(f'Epoch: {epoch}, Loss: {loss.item()}')\n", 2)]
    out = "".join(f"Epoch: {e}, Loss: {3.2 * math.exp(-(e * 6 + i) / 8) + 0.6:.4f}\n" for e in range(3) for i in range(6))
    cells[1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": out}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return _run(tmp_path, "train.ipynb", json.dumps(notebook))


def test_a_pretrained_t5_in_a_plain_loop_is_a_sequence_to_sequence_fine_tune(tmp_path: Path):
    profile = forensics.analyze(_t5_notebook(tmp_path, "T5ForConditionalGeneration", "t5-base")).run_profile
    assert profile.objective == "sft"


def test_a_decoders_conditional_generation_head_alone_says_no_objective(tmp_path: Path):
    # (Gemma 3's and Llava's heads carry the same suffix: decoders, whose objective the head does not tell)
    profile = forensics.analyze(_t5_notebook(tmp_path, "Gemma3ForConditionalGeneration", "google/gemma-3-4b-it"))
    assert profile.run_profile.objective == "unknown"


def test_the_real_fx_profile4_profiles_agree():
    expected = {"hussien_MedQA": ("lora", "sft", "bf16"), "danis-b_YodaGPT": ("full", "pretrain", "unknown"),
                "AaronBarbosa12_transformer_model": ("full", "unknown", "fp32"),
                "bmcmahan2016_cs-269-SLG": ("full", "sft", "fp32")}
    for case, (method, objective, precision) in expected.items():
        profile = forensics.analyze(CORPUS / case).run_profile
        assert (profile.method, profile.objective, profile.precision) == (method, objective, precision), case
