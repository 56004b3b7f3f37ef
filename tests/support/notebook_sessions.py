"""Notebooks of several kernel sessions (Unsloth and Trainer cells) for the notebook-session tests."""
from __future__ import annotations

import json

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
