"""never_learned for a loss and an eval loss that did not move over most of an epoch, grad_norm not logged.

A LoRA whose training loss stays within a few tenths of a percent of where it started over 0.7 of an epoch,
at a learning rate up to 3e-4, while every one of five evaluations sits within a tenth of a percent of the
others: the held-out loss says the same as the training loss, so the adapter changed nothing (a real
alpaca-lora run: 108 points at 4.77 +- 0.02, evals 4.7738-4.7769). Where the eval moved, the train loss fell
at the start, the evals cover only the start, or no eval is logged, the rule stays silent.
"""
from __future__ import annotations

import json

import numpy as np

import forensics

STEPS_PER_EPOCH = 1550
LEVEL = 4.776


def _state(tmp_path, *, evals, train=None, grad_norm=None, last_step=1080):
    rng = np.random.default_rng(7)
    steps = np.arange(10, last_step + 1, 10)
    loss = LEVEL + rng.normal(0.0, 0.006, len(steps)) if train is None else train(steps)
    history = []
    for step, value in zip(steps, loss):
        lr = 3e-4 * min(1.0, step / 100) * (1 - max(0, step - 100) / (STEPS_PER_EPOCH - 100))
        entry = {"epoch": round(step / STEPS_PER_EPOCH, 4), "learning_rate": lr, "loss": round(float(value), 4),
                 "step": int(step)}
        if grad_norm is not None:
            entry["grad_norm"] = grad_norm
        history.append(entry)
    for step, value in evals:
        history.append({"epoch": round(step / STEPS_PER_EPOCH, 4), "eval_loss": value, "step": step})
    history.sort(key=lambda e: (e["step"], "eval_loss" in e))
    state = {"global_step": int(steps[-1]), "max_steps": STEPS_PER_EPOCH, "num_train_epochs": 1,
             "log_history": history}
    run = tmp_path / "checkpoint-1000"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps(state))
    return tmp_path


FLAT_EVALS = [(200, 4.7755), (400, 4.7757), (600, 4.7739), (800, 4.7769), (1000, 4.7738)]


def test_a_loss_and_eval_loss_unmoved_over_most_of_an_epoch_never_learned(tmp_path):
    a = forensics.analyze(_state(tmp_path, evals=FLAT_EVALS))
    assert a.status == "broken"
    assert a.first_incident.kind == "never_learned" and a.first_incident.step == 10
    assert "grad_norm was not logged" in a.first_incident.message
    assert "eval loss stayed" in a.first_incident.message


def test_an_eval_loss_that_fell_two_percent_is_no_never_learned(tmp_path):
    falling = [(s, round(4.80 - 0.1 * s / 1000, 4)) for s, _ in FLAT_EVALS]
    a = forensics.analyze(_state(tmp_path, evals=falling))
    assert "never_learned" not in {f.kind for f in a.findings}


def test_a_fall_over_the_first_points_then_flat_is_no_never_learned(tmp_path):
    def train(steps):
        return np.where(steps <= 20, 6.5, LEVEL) + np.random.default_rng(3).normal(0.0, 0.004, len(steps))
    a = forensics.analyze(_state(tmp_path, evals=FLAT_EVALS, train=train, grad_norm=0.2, last_step=1550))
    assert "never_learned" not in {f.kind for f in a.findings}


def test_evals_only_over_the_start_do_not_speak_for_the_run(tmp_path):
    early = [(100, 4.7755), (200, 4.7757), (300, 4.7749)]
    a = forensics.analyze(_state(tmp_path, evals=early))
    assert "never_learned" not in {f.kind for f in a.findings}


def test_no_eval_and_no_grad_norm_leaves_it_a_lack_of_evidence(tmp_path):
    a = forensics.analyze(_state(tmp_path, evals=[]))
    assert "never_learned" not in {f.kind for f in a.findings}
    assert a.status == "warning"


def test_an_eval_loss_lower_at_every_evaluation_is_a_slow_learner_not_never_learned(tmp_path):
    slow = [(200, 4.7790), (400, 4.7775), (600, 4.7760), (800, 4.7748), (1000, 4.7735)]  # 0.12%, but every time
    a = forensics.analyze(_state(tmp_path, evals=slow))
    assert "never_learned" not in {f.kind for f in a.findings}
