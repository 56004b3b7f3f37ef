"""A notebook's run profile comes from the kernel session that ran its judged training: the execution counts start
again at 1 when the kernel restarts, and an Unsloth 4-bit attempt of an earlier session configured nothing of a
full fp32 Trainer run after the restart. One session, out-of-order cells within it, and a notebook saved without
counts keep every cell that ran. Real case: user074's PRM notebook (tests/realworld)."""
from __future__ import annotations

import json

import pytest

import forensics

_BANNER = ("==((====))==  Unsloth 2024.8: Fast Llama patching. Transformers = 4.44.0.\n"
           "   \\\\   /|    GPU: Tesla T4. Max memory: 14.748 GB. Platform = Linux.\n"
           "O^O/ \\_/ \\    Pytorch: 2.4.0+cu121. CUDA = 7.5. CUDA Toolkit = 12.1.\n"
           "\\        /    Bfloat16 = FALSE. FA [Xformers = 0.0.27.post2. FA2 = False]\n"
           " \"-____-\"     Free Apache license: http://github.com/unslothai/unsloth\n")
_UNSLOTH_LOAD = ("from unsloth import FastLanguageModel\n"
                 "model, tokenizer = FastLanguageModel.from_pretrained(model_name='unsloth/llama-3-8b-bnb-4bit',\n"
                 "    max_seq_length=2048, dtype=None, load_in_4bit=True)\n")
_UNSLOTH_LORA = "model = FastLanguageModel.get_peft_model(model, r=16, lora_alpha=16, lora_dropout=0)\n"
_SFT = ("from trl import SFTTrainer\nfrom transformers import TrainingArguments\n"
        "trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=dataset, args=TrainingArguments(\n"
        "    per_device_train_batch_size=2, learning_rate=2e-4, fp16=True, output_dir='outputs'))\n")
_FULL_LOAD = ("from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
              "model = AutoModelForSequenceClassification.from_pretrained('gpt2', num_labels=3)\n"
              "tokenizer = AutoTokenizer.from_pretrained('gpt2')\n")
_TRAINER = ("from transformers import TrainingArguments, Trainer\n"
            "args = TrainingArguments(output_dir='out', learning_rate=1e-5, per_device_train_batch_size=8)\n"
            "trainer = Trainer(model=model, args=args, train_dataset=dataset)\ntrainer.train()\n")


def _losses(steps: int = 40) -> str:
    """The Trainer's printed dict lines of a run that learns (loss 2.0 falling to ~0.9)."""
    return "".join(str({"loss": round(2.0 - 0.028 * s, 4), "grad_norm": 1.5, "learning_rate": 1e-5,
                        "epoch": round(s / steps, 3)}) + "\n" for s in range(1, steps + 1))


def _analyzed(tmp_path, cells):
    """Analyse a notebook whose code cells are (execution count, source, printed text), in the notebook's order."""
    folder = tmp_path / "run"
    folder.mkdir()
    nb = {"cells": [{"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": text}] if text else []}
                    for count, source, text in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "train.ipynb").write_text(json.dumps(nb))
    return forensics.analyze(folder)


def _unsloth_attempt(counts):
    load, lora, sft = counts
    return [(load, _UNSLOTH_LOAD, _BANNER), (lora, _UNSLOTH_LORA, ""), (sft, _SFT, "")]


def _full_training(counts):
    load, train = counts
    return [(load, _FULL_LOAD, ""), (train, _TRAINER, _losses())]


def test_a_restart_leaves_the_earlier_sessions_unsloth_4bit_load_out_of_a_full_fp32_trainer_profile(tmp_path):
    analysis = _analyzed(tmp_path, _unsloth_attempt((1, 2, 3)) + _full_training((1, 2)))
    profile = analysis.run_profile
    assert (profile.method, profile.precision, profile.framework) == ("full", "fp32", "hf_trainer"), profile.evidence


# Notebooks where every cell that ran configured the training: the Unsloth 4-bit LoRA stands
_ONE_SESSION = _unsloth_attempt((1, 2, 3)) + [(4, "trainer.train()\n", _losses())]
# the LoRA cell ran after the arguments cell below it (count 3 before count 2): no restart, same kernel
_OUT_OF_ORDER = [(1, _UNSLOTH_LOAD, _BANNER), (3, _UNSLOTH_LORA, ""), (2, _SFT, ""), (4, "trainer.train()\n", _losses())]
# the load cell shows count 5, the training 4: it ran again after the training, and (above it) before it too
_RUN_AGAIN_ABOVE = [(5, _UNSLOTH_LOAD, _BANNER), (2, _UNSLOTH_LORA, ""), (3, _SFT, ""), (4, "trainer.train()\n", _losses())]
_NO_COUNTS = _unsloth_attempt((None, None, None)) + _full_training((None, None))
# every cell showing count 1: no kernel's record (one kernel gives each count once), so no sessions to tell apart
_ONE_COUNT_EVERYWHERE = _unsloth_attempt((1, 1, 1)) + [(1, "trainer.train()\n", _losses())]


@pytest.mark.parametrize("cells", [_ONE_SESSION, _OUT_OF_ORDER, _RUN_AGAIN_ABOVE, _NO_COUNTS, _ONE_COUNT_EVERYWHERE],
                         ids=["one_session", "a_cell_run_again_out_of_order", "a_cell_above_run_again_after",
                              "saved_without_counts_is_one_session", "one_count_on_every_cell_is_one_session"])
def test_cells_of_one_session_all_configure_the_training(tmp_path, cells):
    profile = _analyzed(tmp_path, cells).run_profile
    assert (profile.method, profile.framework) == ("qlora", "unsloth"), profile.evidence


def test_a_4bit_reload_after_the_training_in_the_same_session_configured_nothing_of_it(tmp_path):
    cells = _full_training((1, 2)) + [(3, _UNSLOTH_LOAD.replace("model, tokenizer", "infer_model, _"), "")]
    profile = _analyzed(tmp_path, cells).run_profile
    assert (profile.method, profile.precision) == ("full", "fp32"), profile.evidence
