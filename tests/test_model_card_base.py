"""The base model a PEFT/TRL model card names in its YAML header sets the vocabulary, where adapter_config.json
saved base_model_name_or_path as null (a local base, PEFT 0.18): a LoRA of SmolLM2-360M whose first losses sit
above ln 49152 = 10.80 starts above the uniform guess, which the tool could not see without the vocabulary."""
from __future__ import annotations

import json

import numpy as np

import forensics
from forensics.ingest.model_card import read_model_card

CARD = """---
base_model: HuggingFaceTB/SmolLM2-360M
library_name: peft
tags:
- base_model:adapter:HuggingFaceTB/SmolLM2-360M
- lora
---

# Model Card for Model ID
"""

LIST_CARD = """---
base_model:
- HuggingFaceTB/SmolLM2-360M
library_name: peft
---
"""


def _adapter_run(tmp_path, card: str | None):
    run = tmp_path / "lora_output" / "checkpoint-240"
    run.mkdir(parents=True)
    (run / "adapter_config.json").write_text(json.dumps(
        {"base_model_name_or_path": None, "peft_type": "LORA", "r": 8, "lora_alpha": 16,
         "target_modules": ["q_proj", "v_proj"], "task_type": "CAUSAL_LM"}))
    if card is not None:
        (run / "README.md").write_text(card)
    steps = np.arange(1, 241)
    loss = np.where(steps < 20, 11.64 - 0.085 * (steps - 1), 0.09 + 9.0 * np.exp(-(steps - 20) / 8.0))
    history = [{"epoch": s / 4, "learning_rate": 2e-4 * (1 - s / 240), "loss": round(float(v), 4),
                "grad_norm": 0.5, "step": int(s)} for s, v in zip(steps, loss)]
    (run / "trainer_state.json").write_text(json.dumps(
        {"global_step": 240, "max_steps": 240, "num_train_epochs": 60, "log_history": history}))
    return tmp_path


def test_a_model_card_header_names_the_base_model(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(CARD)
    assert read_model_card(path)["card.base_model"] == "HuggingFaceTB/SmolLM2-360M"


def test_a_model_card_header_lists_the_base_model(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(LIST_CARD)
    assert read_model_card(path)["card.base_model"] == "HuggingFaceTB/SmolLM2-360M"


def test_a_readme_without_a_header_names_no_base(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("# My run\n\nbase_model: HuggingFaceTB/SmolLM2-360M\n")
    assert "card.base_model" not in read_model_card(path)


def test_the_card_base_gives_the_vocabulary_and_the_start_above_the_guess(tmp_path):
    a = forensics.analyze(_adapter_run(tmp_path, CARD))
    assert a.config.get("model.vocab_size") == 49152
    assert a.first_incident.kind == "start_above_uniform_guess" and a.first_incident.step == 1


def test_without_the_card_the_vocabulary_stays_unknown(tmp_path):
    a = forensics.analyze(_adapter_run(tmp_path, None))
    assert a.config.get("model.vocab_size") is None
    assert "start_above_uniform_guess" not in {f.kind for f in a.findings}
