"""Memorization without an eval loss where the loss crossed the memorization level a little short of a tenfold
descent and went on falling under it (analyzers.memorization.memorized_without_eval, `to_the_end`).

mohammadoumar's LLaMA-Factory LoRA (corpus batch AS28): 0.71 at step 10, under the five-epoch level of 0.1 from step
50 (0.076: 9.3x under the start), then 0.027, 0.024, 0.0086, 0.0108 to the end of epoch 5, no eval loss. The descent
to where the loss ended is 70-fold: the training set learned by heart, as any tenfold descent is.
"""
from __future__ import annotations

import json

import forensics

STEPS_AN_EPOCH = 22
FELL_ON = [0.7078, 0.1644, 0.1043, 0.1094, 0.076, 0.0548, 0.0453, 0.0271, 0.0244, 0.0086, 0.0108]
HELD = [0.7078, 0.1644, 0.1043, 0.1094, 0.076, 0.0748, 0.0753, 0.0771, 0.0744, 0.0736, 0.0758]


def _run(tmp_path, losses, evals=()):
    history = [{"loss": v, "learning_rate": 5e-5 * (1 - s / 110), "epoch": s / STEPS_AN_EPOCH, "step": s}
               for s, v in zip(range(10, 111, 10), losses)]
    history += [{"eval_loss": v, "epoch": s / STEPS_AN_EPOCH, "step": s} for s, v in evals]
    history.sort(key=lambda e: (e["step"], "eval_loss" in e))
    state = {"global_step": 110, "max_steps": 110, "num_train_epochs": 5, "epoch": 5.0, "log_history": history,
             "logging_steps": 10, "is_world_process_zero": True}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    return forensics.analyze(tmp_path)


def test_a_loss_that_went_on_falling_under_the_level_is_memorization_dated_where_it_levelled_off(tmp_path):
    a = _run(tmp_path, FELL_ON)
    (f,) = [f for f in a.findings if f.kind == "memorization"]
    assert f.severity == "warning" and 50 <= f.step <= 90 and a.status == "warning"


def test_a_loss_that_stayed_where_it_crossed_the_level_is_no_memorization(tmp_path):
    a = _run(tmp_path, HELD)  # 0.71 -> 0.075 and held: 9.5x, short of tenfold
    assert not [f for f in a.findings if f.kind == "memorization"]


def test_with_a_held_out_eval_the_descent_past_the_crossing_is_not_judged_here(tmp_path):
    evals = [(22, 0.21), (44, 0.19), (66, 0.2), (88, 0.2), (110, 0.21)]  # held out: flat, well above the training loss
    a = _run(tmp_path, FELL_ON, evals)
    assert not [f for f in a.findings if f.kind == "memorization" and "no eval loss" in f.message]
