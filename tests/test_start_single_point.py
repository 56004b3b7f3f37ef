"""An adapter fine-tune that logged one training loss only, above the uniform guess over its known vocabulary, starts
above that guess: a LoRA starts as the identity, so its first window's loss is the trained base's own, and nothing
after it could show a start-up blip (`detect_start_above_uniform_guess`, one point)."""
from __future__ import annotations

import json
import math

import pytest

from forensics import analyze
from support.hf_tensorboard import write_hf_tensorboard

pytest.importorskip("torch")

_ADAPTER = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 16, "lora_alpha": 32, "lora_dropout": 0.1,
            "base_model_name_or_path": "microsoft/DialoGPT-small", "target_modules": ["c_attn", "c_fc", "c_proj"],
            "fan_in_fan_out": True, "inference_mode": True, "bias": "none"}


def _two_step_lora(tmp_path, loss: float):
    """A LoRA of a GPT-2-sized chat model run for 2 optimizer steps, logging every 2: one point, at its end."""
    out = tmp_path / "output"
    write_hf_tensorboard(out / "runs" / "Oct05_12-19-52_host", {2: {"loss": loss, "grad_norm": 2.57,
                                                                    "learning_rate": 1e-5, "epoch": 1.0}},
                         summary_step=2, train_loss=loss,
                         args={"output_dir": "output", "logging_steps": 2, "gradient_accumulation_steps": 4,
                               "num_train_epochs": 1, "fp16": False, "bf16": False})
    (out / "adapter_config.json").write_text(json.dumps(_ADAPTER))
    return tmp_path


def test_one_loss_above_ln_vocab_of_a_lora_is_a_start_above_the_uniform_guess(tmp_path):
    a = analyze(_two_step_lora(tmp_path, 15.86))
    assert math.log(50257) < 15.86
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 2)


def test_one_loss_at_a_fine_tunes_level_is_no_start_above_the_guess(tmp_path):
    """The same two-step LoRA whose one loss, 3.1, is where a trained GPT-2 reads chat text: no start above the guess
    (one point still shows no learning)."""
    a = analyze(_two_step_lora(tmp_path, 3.1))
    assert not any(f.kind == "start_above_uniform_guess" for f in a.findings)
    assert a.first_incident.kind == "no_learning_evidence"
