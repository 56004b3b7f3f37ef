"""Overfitting where the training loss is logged once an evaluation: nanoGPT's `step N: train loss T, val loss V`
lines alone (the train-split estimate, `train_split_loss`, is then the training loss the eval loss is set against),
or a `loss` logged as seldom as the evaluation (the later half of four evals after the best holds two training
points: the last three after the best are its later level). Shilpaj1994's notebook of Karpathy's GPT on tiny
Shakespeare (corpus case Shilpaj1994_ERA, judged warning, overfitting at 3500): val 1.4804 at step 3000, then
1.5127, 1.5102, 1.5351, 1.5565 (2-5% above it, one dip) while the train-split loss fell 1.0718 -> 0.8589. An eval
loss back at its level, or a training loss that stopped falling, is no overfitting."""
from __future__ import annotations

import pandas as pd

from forensics import analyze
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds

STEPS = [0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 4999]
VAL = [4.2306, 1.9146, 1.5987, 1.5271, 1.4978, 1.4910, 1.4804, 1.5127, 1.5102, 1.5351, 1.5565]
TRAIN = [4.2221, 1.7600, 1.3903, 1.2644, 1.1835, 1.1233, 1.0718, 1.0179, 0.9604, 0.9125, 0.8589]
BACK = VAL[:7] + [1.4890, 1.4850, 1.4930, 1.4870]  # back at the level the evals held before their best
FLAT = TRAIN[:7] + [1.0650, 1.0700, 1.0690, 1.0660]  # the training loss stopped falling at the best


def _metrics(val, train, train_name):
    return {train_name: pd.Series(train, index=STEPS), "eval_loss": pd.Series(val, index=STEPS)}


def _nanogpt_eval_lines(tmp_path, val, train):
    lines = [f"step {s}: train loss {t:.4f}, val loss {v:.4f}" for s, t, v in zip(STEPS, train, val)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_a_val_loss_above_its_best_while_the_train_split_loss_fell_is_overfitting():
    found = detect_overfitting(_metrics(VAL, TRAIN, "train_split_loss"), Thresholds())
    assert [(f.kind, f.step) for f in found] == [("overfitting", 3500)]
    assert "training loss keeps falling" in found[0].message


def test_a_loss_logged_once_an_evaluation_still_shows_the_training_loss_falling_after_the_best():
    found = detect_overfitting(_metrics(VAL, TRAIN, "loss"), Thresholds())
    assert [(f.kind, f.step) for f in found] == [("overfitting", 3500)]


def test_nanogpt_eval_lines_alone_that_overfit_are_a_warning_at_the_eval_after_the_best(tmp_path):
    a = analyze(_nanogpt_eval_lines(tmp_path, VAL, TRAIN))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 3500)


def test_nanogpt_eval_lines_whose_val_loss_keeps_falling_are_healthy(tmp_path):
    falling = VAL[:7] + [1.4701, 1.4655, 1.4590, 1.4552]
    assert analyze(_nanogpt_eval_lines(tmp_path, falling, TRAIN)).status == "healthy"


def test_a_val_loss_back_at_its_level_is_no_overfitting():
    assert detect_overfitting(_metrics(BACK, TRAIN, "train_split_loss"), Thresholds()) == []


def test_a_train_split_loss_that_stopped_falling_is_no_overfitting():
    assert detect_overfitting(_metrics(VAL, FLAT, "train_split_loss"), Thresholds()) == []
