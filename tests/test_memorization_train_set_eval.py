"""Tests of memorization where the eval loss is most likely the training set scored again.

An eval loss that keeps pace with the training loss over many passes of a tiny set is no held-out evidence.

An eval loss stands memorization down: it can show whether the model still generalises. Over ten passes and more
over the same few examples, a held-out loss parts from the training loss (the training loss goes under it); one that
sits at the training loss's own level at every evaluation is most likely the training set scored again (a script
passing the train split as eval_dataset: 50 epochs over ~104 examples, eval 0.198 -> 0.047 beside a training loss
0.27 -> 0.05: judged memorization). The memorization warning then fires as without an eval loss, saying what the
eval looks like. A run of the same shape whose eval loss is held out (above the training loss, levelling off) keeps
its eval loss as evidence and is healthy.
"""
from __future__ import annotations

import json

import numpy as np

import forensics

STEPS_AN_EPOCH, EPOCHS, LOG_EVERY, EVAL_EVERY = 52, 50, 10, 500


def _train_loss(step: int, rng) -> float:
    """A LoRA fitting ~104 examples 50 times: a padding-heavy start, then down from 0.27 to about 0.05."""
    if step <= 40:
        return 8.0 - 0.19 * step
    return float(0.045 + 0.24 * np.exp(-step / 600) + rng.normal(0, 0.008))


def _run(tmp_path, eval_loss):
    rng = np.random.default_rng(3)
    total = STEPS_AN_EPOCH * EPOCHS
    history = []
    for step in range(LOG_EVERY, total + 1, LOG_EVERY):
        history.append({"step": step, "epoch": round(step / STEPS_AN_EPOCH, 4), "loss": round(_train_loss(step, rng), 4),
                        "grad_norm": 2.5, "learning_rate": 5e-5 * (1 - step / total)})
        if step % EVAL_EVERY == 0:
            history.append({"step": step, "epoch": round(step / STEPS_AN_EPOCH, 4), "eval_loss": eval_loss(step)})
    state = {"global_step": total, "max_steps": total, "num_train_epochs": EPOCHS, "logging_steps": LOG_EVERY,
             "eval_steps": EVAL_EVERY, "log_history": history}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 4, "lora_alpha": 32,
                                                              "task_type": "CAUSAL_LM",
                                                              "base_model_name_or_path": "meta-llama/Llama-3.2-1B"}))
    return tmp_path


def _like_training(step: int) -> float:
    return 0.043 + 0.24 * np.exp(-step / 600)  # the training loss's own level, a hair under


def _held_out(step: int) -> float:
    return 0.62 + 0.5 * np.exp(-step / 400)  # above the training loss, levelling off


def test_an_eval_at_the_training_loss_over_50_passes_does_not_stand_memorization_down(tmp_path):
    a = forensics.analyze(_run(tmp_path, _like_training))
    assert a.status == "warning" and a.first_incident.kind == "memorization"
    assert "keeps pace with the training loss at each of its 5 evaluations" in a.first_incident.message
    assert a.first_incident.evidence["eval_like_training"] == "eval_loss"


def test_a_held_out_eval_above_the_training_loss_keeps_the_run_healthy(tmp_path):
    a = forensics.analyze(_run(tmp_path, _held_out))
    assert not any(f.kind == "memorization" for f in a.findings)
    assert a.status == "healthy"
