"""Tests of the notebook code reader: a cell with an invalid escape.

From review day 8 (batch AO): each test fails on the code before its change; each change also has a test where
its rule must not fire. Folder names here avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.review_runs import training_notebook


# ---- change 7: notebook_code.parse_quietly, a user's code parsed without the compiler's warnings -----------------


_ESCAPE_CELL = '''import re
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, TrainingArguments, Trainer
pattern = re.compile("<answer>\\s*(\\d+)\\s*</answer>")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-4B")
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM"))
trainer = Trainer(model=model, args=TrainingArguments(output_dir="out", learning_rate=5e-6, bf16=True), train_dataset=ds)
trainer.train()
'''


def test_analysing_a_notebook_whose_code_has_an_invalid_escape_emits_no_warning(tmp_path):
    import warnings
    assert "\\s" in _ESCAPE_CELL  # the cell's own source holds `"\s*"`: an invalid escape in a plain string
    run = training_notebook(tmp_path / "run", [_ESCAPE_CELL])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forensics.analyze(run)
    # an unclosed socket an earlier test left is collected whenever the garbage collector runs: not this analysis's
    assert [str(w.message) for w in caught if not issubclass(w.category, ResourceWarning)] == []


def test_a_cell_with_an_invalid_escape_is_still_read_where_warnings_are_errors(tmp_path):
    import warnings
    run = training_notebook(tmp_path / "run", [_ESCAPE_CELL])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.precision) == ("lora", "bf16")
