"""A log with too few points to call the model frozen, whose every grad_norm is exactly 0 beside a finite loss:
a `no_learning_signal` warning.

A grad_norm of exactly 0.0 is no small gradient: nothing reached the trainable weights (a PEFT model trained with
gradient checkpointing whose inputs do not require grads gives exactly this from its first update). Over five or more
points with nothing learned that is a frozen model (an error, `detect_no_gradient`); over one to four points it is
still every step the log shows, which someone must look at: a warning. A short log whose grad_norm is an ordinary
positive number, or whose loss is 0 too (masked labels, another detector's), is not this.
"""
from __future__ import annotations

import json

import forensics


def _state_run(tmp_path, points):
    run = tmp_path / "checkpoint-30"
    run.mkdir()
    history = [{"step": 10 * (i + 1), "epoch": round(0.28 * (i + 1), 2), "loss": loss, "grad_norm": grad,
                "learning_rate": 1.8e-4 - 2e-5 * i} for i, (loss, grad) in enumerate(points)]
    state = {"global_step": 10 * len(points), "max_steps": 36, "logging_steps": 10, "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    adapter = {"base_model_name_or_path": "meta-llama/Llama-3.2-3B-Instruct", "peft_type": "LORA",
               "task_type": "CAUSAL_LM", "r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj"]}
    (run / "adapter_config.json").write_text(json.dumps(adapter))
    return run


def test_one_logged_point_with_grad_norm_exactly_zero_warns_no_learning_signal(tmp_path):
    a = forensics.analyze(_state_run(tmp_path, [(1.5583, 0.0)]))
    assert a.status == "warning"
    signal = [f for f in a.findings if f.kind == "no_learning_signal"]
    assert [(f.severity, f.step) for f in signal] == [("warning", 10)]
    assert a.first_incident.kind == "no_learning_signal"


def test_three_logged_points_with_grad_norm_exactly_zero_warn_no_learning_signal(tmp_path):
    a = forensics.analyze(_state_run(tmp_path, [(1.56, 0.0), (1.55, 0.0), (1.57, 0.0)]))
    signal = [f for f in a.findings if f.kind == "no_learning_signal"]
    assert [(f.severity, f.step, f.end_step) for f in signal] == [("warning", 10, 30)]


def test_a_short_log_with_an_ordinary_grad_norm_has_no_learning_signal_finding(tmp_path):
    a = forensics.analyze(_state_run(tmp_path, [(1.56, 0.84), (1.41, 0.77), (1.32, 0.69)]))
    assert not any(f.kind == "no_learning_signal" for f in a.findings)


def test_a_short_log_with_one_zero_among_ordinary_grad_norms_is_not_called_zero_throughout(tmp_path):
    a = forensics.analyze(_state_run(tmp_path, [(1.56, 0.84), (1.41, 0.0), (1.32, 0.69)]))
    assert not any(f.kind == "no_learning_signal" and f.step == 10 for f in a.findings)
