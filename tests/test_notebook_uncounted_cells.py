"""Tests of the notebook reader: uncounted cells that ran or did not.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics


# ---- change 4: a framework's "lora" beside a 4-bit base (PEFT's model card block) is QLoRA ----------------------------

import json  # noqa: E402

# ---- change 8: cells that lost their counts after a few counted ones, before a training cell that shows output ----------

from support.review_runs import training_notebook  # noqa: E402


_LOAD = ("from transformers import AutoModelForCausalLM\n"
         "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', load_in_8bit=True)")
_ADAPTER = "from peft import LoraConfig\nlora_config = LoraConfig(r=8, lora_alpha=8, task_type='CAUSAL_LM')"
_TRAIN = ("from trl import SFTTrainer\ntrainer = SFTTrainer(model=model, peft_config=lora_config)\n"
          "trainer.train()")


def _uncount(folder, from_cell: int, also_print: bool = False):
    path = folder / "train.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"][from_cell:]:
        cell["execution_count"] = None
    if also_print:
        nb["cells"][from_cell]["source"] += "\nprint(model)"
    path.write_text(json.dumps(nb))
    return folder


def test_uncounted_silent_cells_before_an_uncounted_training_cell_with_output_ran(tmp_path):
    run = _uncount(training_notebook(tmp_path / "run", ["import torch", _LOAD, _ADAPTER, _TRAIN]), 1)
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective, profile.framework) == ("lora", "sft", "trl")


def test_an_uncounted_cell_that_would_have_printed_but_shows_nothing_did_not_run(tmp_path):
    run = _uncount(training_notebook(tmp_path / "run", ["import torch", _ADAPTER, _LOAD, _TRAIN]), 1, also_print=True)
    assert forensics.analyze(run).run_profile.method != "lora"  # (the LoraConfig cell sits before the silent one)
