"""Tests of the run profile's method (profile/): LoRA on a 4-bit base is qlora.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics


# ---- change 4: a framework's "lora" beside a 4-bit base (PEFT's model card block) is QLoRA ----------------------------

import json  # noqa: E402


_CARD_QUANT = """---
library_name: peft
---
## Training procedure


The following `bitsandbytes` quantization config was used during training:
- load_in_8bit: False
- load_in_4bit: {four}
- bnb_4bit_quant_type: nf4
- bnb_4bit_compute_dtype: float16
"""


def _factory_save(folder, four: bool):
    folder.mkdir(parents=True)
    (folder / "finetuning_args.json").write_text(json.dumps({"finetuning_type": "lora", "lora_rank": 8}))
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "THUDM/chatglm2-6b"}))
    (folder / "README.md").write_text(_CARD_QUANT.format(four=four))
    log = [{"current_steps": s, "total_steps": 100, "loss": 2.0 - s / 100, "learning_rate": 1e-4} for s in range(5, 105, 5)]
    (folder / "trainer_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    return folder


def test_a_lora_fine_tuning_type_on_a_base_the_model_card_says_was_4bit_is_qlora(tmp_path):
    profile = forensics.analyze(_factory_save(tmp_path / "run", True)).run_profile
    assert profile.method == "qlora" and "README.md" in profile.evidence["method"]


def test_a_lora_fine_tuning_type_on_a_base_not_loaded_in_4bit_stays_lora(tmp_path):
    assert forensics.analyze(_factory_save(tmp_path / "run", False)).run_profile.method == "lora"


# ---- change 6: more ways a run says its base was 4-bit -------------------------------------------------------------------


def test_llamafactory_quantizing_the_model_to_4_bit_makes_an_adapter_qlora(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = ["07/13/2024 11:18:56 - INFO - llamafactory.model.model_utils.quantization - Quantizing model to 4 bit with "
           "bitsandbytes.", "trainable params: 4,194,304 || all params: 7,245,926,400 || trainable%: 0.0579"]
    log += [f"{{'loss': {2.0 - s / 100:.4f}, 'grad_norm': 1.1, 'learning_rate': 0.0001, 'epoch': {s / 50:.2f}}}"
            for s in range(1, 31)]
    (run / "train.log").write_text("\n".join(log) + "\n")
    assert forensics.analyze(run).run_profile.method == "qlora"


def _adapter_with_args(folder, output_dir: str):
    import torch
    from transformers import TrainingArguments
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "task_type": "CAUSAL_LM",
                                                             "base_model_name_or_path": "models/gemma-2b-it"}))
    torch.save(TrainingArguments(output_dir=output_dir, report_to=[]), folder / "training_args.bin")
    log = [{"loss": 2.0 - s / 100, "learning_rate": 1e-4, "epoch": s / 50, "step": s} for s in range(10, 210, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 200}))
    return folder


def test_a_run_named_for_its_4bit_base_is_qlora_but_a_parent_folder_is_not_its_name(tmp_path):
    pytest = __import__("pytest")
    pytest.importorskip("transformers")
    named = _adapter_with_args(tmp_path / "a", "experiments/10cat_4bit_r32_lr4e-4")
    parent = _adapter_with_args(tmp_path / "b", "runs_4bit_sweep/gemma_r32_lr4e-4")
    assert forensics.analyze(named).run_profile.method == "qlora"
    assert forensics.analyze(parent).run_profile.method == "lora"
