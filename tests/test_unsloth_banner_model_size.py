"""Tests of the Unsloth banner reader (ingest/banners.py): the model size it gives.

From review day 9, judge second pass (batches AQ4 and AQ5): each test fails on the code before its change; each
change also has a test where its rule must not fire. Folder names avoid the words the profile reads in names."""
from __future__ import annotations

import json

import forensics
from forensics.ingest.banners import find_banners


# ---- change 1: Unsloth's early-2025 training banner prints the model's count after a '/' ----------------------------


def _unsloth_training_banner(counts: str) -> list[str]:
    return ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1",
            "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 50",
            "O^O/ \\_/ \\    Batch size per device = 4 | Gradient accumulation steps = 1",
            "\\        /    Data Parallel GPUs = 1 | Total batch size (4 x 1 x 1) = 4",
            f' "-____-"     Trainable parameters = {counts}']


def test_unsloth_banner_trainable_slash_total_reads_the_total_as_the_model_size():
    (banner,) = find_banners(_unsloth_training_banner("6,522,880/1,006,408,832 (0.65% trained)"))
    assert banner.kind == "unsloth"
    assert (banner.trainable_params, banner.all_params) == (6_522_880, 1_006_408_832)


def test_unsloth_banner_with_the_trainable_count_alone_has_no_total():
    (banner,) = find_banners(_unsloth_training_banner("6,522,880 (0.65% trained)"))
    assert (banner.trainable_params, banner.all_params) == (6_522_880, None)
    (newer,) = find_banners(_unsloth_training_banner("6,522,880 of 1,006,408,832 (0.65% trained)"))
    assert (newer.trainable_params, newer.all_params) == (6_522_880, 1_006_408_832)


def _unsloth_notebook(folder, four_bit: bool, counts: str):
    """An executed Unsloth notebook: the model loaded by FastLanguageModel (4-bit or not), LoRA, SFTTrainer, the
    training banner and the printed Step / Training Loss table."""
    def code(source: str, outputs=()):
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source,
                "outputs": list(outputs)}

    def stream(text: str):
        return {"output_type": "stream", "name": "stdout", "text": text}

    rows = "\n".join(f"{i}\t{2.1 - 0.02 * i:.6f}" for i in range(1, 41))
    cells = [code('from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(\n'
                  f'    model_name = "unsloth/Llama-3.2-3B-Instruct", max_seq_length = 2048, '
                  f'load_in_4bit = {four_bit},\n)'),
             code("model = FastLanguageModel.get_peft_model(model, r = 16, lora_alpha = 16)"),
             code("from trl import SFTTrainer\nfrom transformers import TrainingArguments\n"
                  "trainer = SFTTrainer(model = model, tokenizer = tokenizer, train_dataset = dataset,\n"
                  "    args = TrainingArguments(max_steps = 40, learning_rate = 2e-4, fp16 = True, "
                  "logging_steps = 1, output_dir = 'outputs'))"),
             code("trainer_stats = trainer.train()",
                  [stream("\n".join(_unsloth_training_banner(counts)) + "\n"),
                   stream(" [40/40 02:10, Epoch 0/1]\nStep\tTraining Loss\n" + rows + "\n")])]
    folder.mkdir(parents=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                    "nbformat_minor": 5}))
    return folder


def test_unsloth_slash_banner_of_a_16_bit_base_gives_the_model_size(tmp_path):
    run = _unsloth_notebook(tmp_path / "run", False, "24,313,856/3,237,063,680 (0.75% trained)")
    profile = forensics.analyze(run).run_profile
    assert (profile.framework, profile.method, profile.model_params) == ("unsloth", "lora", 3_237_063_680)


def test_unsloth_slash_banner_of_a_4_bit_base_counts_packed_weights_not_the_model_size(tmp_path):
    run = _unsloth_notebook(tmp_path / "run", True, "24,313,856/1,827,777,536 (1.33% trained)")
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.model_params) == ("qlora", 3_000_000_000)
