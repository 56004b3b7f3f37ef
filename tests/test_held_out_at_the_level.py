"""A gradual descent of the training loss toward 0 beside a held-out eval loss that sat under the memorization level
from the first evaluation on is a task learned, not a memorized training set (analyzers.collapse,
`_held_out_already_at_zero` with `_held_out_level`).

smhavens' flan-t5-base word-category game (corpus batch AS30): training loss 0.39 -> 0.0008 over ten epochs, eval
0.0065, 0.0089, 0.0029, 0.0015, 0.0020, 0.0083, 0.0036, 0.0014, 0.0021 at the nine epoch ends, ROUGE-1 0.998.
"""
from __future__ import annotations

import json

import numpy as np

import forensics

EPOCH = 1710
# the run's training losses every 500 steps: a steady fall with small bumps at a level where they are noise
TRAIN = [0.3858, 0.0819, 0.046, 0.0317, 0.0132, 0.0103, 0.015, 0.0078, 0.0075, 0.0105, 0.0159, 0.0121, 0.0105,
         0.0136, 0.0067, 0.0052, 0.0032, 0.0036, 0.0028, 0.0023, 0.0045, 0.0031, 0.0013, 0.0017, 0.0008, 0.0017,
         0.0012, 0.0024, 0.0015, 0.0012, 0.0008, 0.0004, 0.0006, 0.0011]


def _run(tmp_path, evals):
    steps = np.arange(500, 17001, 500)
    train = TRAIN
    history = [{"loss": round(float(v), 4), "learning_rate": 3e-4 * (1 - s / 17100), "epoch": round(s / EPOCH, 2),
                "step": int(s)} for s, v in zip(steps, train)]
    history += [{"eval_loss": v, "epoch": float(i + 1), "step": EPOCH * (i + 1)} for i, v in enumerate(evals)]
    history.sort(key=lambda e: (e["step"], "eval_loss" in e))
    state = {"global_step": 17000, "max_steps": 17100, "num_train_epochs": 10, "epoch": 9.94, "log_history": history,
             "logging_steps": 500}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    return forensics.analyze(tmp_path)


def test_a_held_out_loss_under_the_level_from_the_first_eval_on_is_a_task_learned(tmp_path):
    a = _run(tmp_path, [0.0065, 0.0089, 0.0029, 0.0015, 0.0020, 0.0083, 0.0036, 0.0014, 0.0021])
    assert not [f for f in a.findings if f.kind in ("memorization", "loss_collapse")]


def test_a_held_out_loss_above_the_level_leaves_the_descent_judged(tmp_path):
    a = _run(tmp_path, [0.31, 0.30, 0.31, 0.32, 0.33, 0.33, 0.34, 0.35, 0.36])  # held out: well above, and rising
    assert [f for f in a.findings if f.kind in ("memorization", "overfitting") and f.severity == "warning"]
