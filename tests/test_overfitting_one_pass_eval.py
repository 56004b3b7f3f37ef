"""Tests of the overfitting rule (analyzers/overfitting.py) on an eval loss within one pass.

From the day-10 guard pass two (rules that called unlearned or overfitting runs fine): each run is a small HF
Trainer `trainer_state.json` built as the reviewer built it, beside a run the rule must still let through."""
from __future__ import annotations

import math

import numpy as np

from support.state_writes import _analyze, _kinds, _write_state


# ---- (1) one pass over the data: an eval rise the size of a small eval set's wobble is no overfitting, a large one is


def _one_epoch_sft(folder, evals: dict[int, float], seed=6, steps=1000):
    """HF SFT, num_train_epochs=1 (the epoch counter ends at 1.0), logging every 10 steps with grad_norm 1.0, an eval
    at the steps of `evals`; the training loss falls 1.7 -> 0.9 and stays there."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(steps // 10):
        step = 10 * (i + 1)
        loss = 0.9 + 0.8 * math.exp(-i / 15) + 0.02 * rng.standard_normal()
        log.append({"step": step, "epoch": round(step / steps, 4), "loss": round(loss, 4),
                    "learning_rate": 2e-5 * (1 - step / steps), "grad_norm": 1.0})
        if step in evals:
            log.append({"step": step, "epoch": round(step / steps, 4), "eval_loss": evals[step]})
    _write_state(folder, log, max_steps=steps, num_train_epochs=1)


def test_a_one_pass_eval_loss_that_nearly_doubles_while_the_training_loss_falls_is_still_a_warning(tmp_path):
    # eval loss best 1.00 at step 300, then 1.05, 1.15, ... 1.9 while the training loss keeps falling
    evals = {100: 1.2, 200: 1.05, 300: 1.0, 400: 1.05, 500: 1.15, 600: 1.3, 700: 1.45, 800: 1.6, 900: 1.75, 1000: 1.9}
    _one_epoch_sft(tmp_path, evals)
    a = _analyze(tmp_path)
    assert a.status == "warning", [f.message for f in a.findings]
    assert {"overfitting", "train_eval_mismatch"} & set(_kinds(a)), [f.message for f in a.findings]


def test_a_one_pass_eval_loss_wobbling_up_three_hundredths_while_the_training_loss_falls_is_no_overfitting(tmp_path):
    # a small eval set every 20 steps: falling 1.6 -> 1.000 by step 600, then up by two or three hundredths
    evals = {s: round(1.0 + 0.6 * math.exp(-(s - 20) / 120), 3) for s in range(20, 620, 20)}
    evals.update({s: round(1.03 + 0.006 * math.sin(s), 3) for s in range(620, 1020, 20)})
    _one_epoch_sft(tmp_path, evals)
    a = _analyze(tmp_path)
    assert "overfitting" not in _kinds(a), [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]
