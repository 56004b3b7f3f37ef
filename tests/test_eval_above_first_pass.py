"""A multi-epoch run evaluated only at its end: the one eval loss above what the model scored on unseen batches late
in its first pass, and far above the training loss now, is overfitting (a LLaMA-Factory QLoRA of gemma-2b: train
1.49 -> 0.55 over 3 epochs of ~900 examples, falling in steps at each epoch boundary; its one eval, 1.51 at the end).
An eval at or under the first-pass level, a training loss not far under the eval, a run of one pass, three or more
evaluations (the overfitting analyzer's to judge) and whole-number epoch labels stay silent."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers import analyze_metrics
from forensics.analyzers.first_pass_eval import detect_eval_above_first_pass
from forensics.config import Thresholds

STEPS = np.arange(10, 340, 10)  # 33 points, 113 steps an epoch
EPOCHS = STEPS / 113
# epoch 1 at ~1.24, epoch 2 at ~0.86, epoch 3 at ~0.55: the staircase of a model fitting its training examples
TRAIN = np.where(EPOCHS <= 1, 1.49 - 0.25 * EPOCHS, np.where(EPOCHS <= 2, 0.86, 0.55))


def _metrics(evals: dict, train=TRAIN, epochs=EPOCHS):
    return {"loss": pd.Series(train, index=STEPS), "epoch": pd.Series(epochs, index=STEPS),
            "eval_loss": pd.Series(list(evals.values()), index=list(evals.keys()), dtype="float64")}


def test_one_closing_eval_above_the_first_pass_loss_is_overfitting():
    found = detect_eval_above_first_pass(_metrics({330: 1.509}), Thresholds())
    assert [(f.kind, f.severity, f.step) for f in found] == [("overfitting", "warning", 330)]
    assert "first pass" in found[0].message and "if the eval set is drawn like the training set" in found[0].message


def test_the_whole_pipeline_names_it_the_first_incident():
    kinds = [f.kind for f in analyze_metrics(_metrics({330: 1.509}), Thresholds()) if f.severity != "info"]
    assert kinds == ["overfitting"]


def test_an_eval_at_the_first_pass_level_is_no_overfitting():
    assert detect_eval_above_first_pass(_metrics({330: 1.20}), Thresholds()) == []


def test_a_training_loss_not_far_under_the_eval_is_no_overfitting():
    flat = np.full(len(STEPS), 1.25)
    assert detect_eval_above_first_pass(_metrics({330: 1.45}, train=flat), Thresholds()) == []


def test_an_eval_within_the_first_two_passes_is_not_judged():
    assert detect_eval_above_first_pass(_metrics({200: 1.509}), Thresholds()) == []


def test_three_evaluations_are_left_to_the_overfitting_analyzer():
    assert detect_eval_above_first_pass(_metrics({113: 1.20, 226: 1.35, 330: 1.509}), Thresholds()) == []


def test_whole_number_epoch_labels_cannot_say_which_points_were_the_first_pass():
    labels = np.floor(EPOCHS)
    assert detect_eval_above_first_pass(_metrics({330: 1.509}, epochs=labels), Thresholds()) == []


def test_two_evaluations_that_fell_are_no_overfitting():
    assert detect_eval_above_first_pass(_metrics({113: 2.30, 330: 1.72}), Thresholds()) == []


def test_a_training_loss_printed_as_zero_at_the_eval_is_left_alone():
    zero_end = np.where(EPOCHS > 2.8, 0.0, TRAIN)
    assert detect_eval_above_first_pass(_metrics({330: 1.9}, train=zero_end), Thresholds()) == []
