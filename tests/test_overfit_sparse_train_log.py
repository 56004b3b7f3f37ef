"""Overfitting where the training loss is logged as seldom as the evaluation (logging_steps = eval_steps = 25: one
training point an evaluation interval). The training level at the best eval is then read over the last three
logged points up to it, not refused for want of three points in its interval (a QLoRA of Mistral-7B in a notebook:
eval lowest 1.205 at step 325, then 3.5-8.5% above it at each of seven evals while the training loss fell
0.898 -> 0.58). A held-out loss that came back to its level, or a training loss that did not fall, is no
overfitting."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds

STEPS = np.arange(25, 501, 25)
EVALS = [1.6436, 1.5291, 1.4196, 1.3652, 1.3187, 1.2852, 1.2482, 1.2240, 1.2174, 1.2392, 1.2216, 1.2260, 1.2053,
         1.2552, 1.2669, 1.2528, 1.2475, 1.2689, 1.3071, 1.3005]
TRAIN = [2.7166, 1.6871, 1.5544, 1.4802, 1.4186, 1.2841, 1.1715, 1.1252, 1.0914, 0.9476, 0.9610, 0.8944, 0.8980,
         0.7832, 0.6381, 0.6959, 0.7001, 0.7488, 0.6398, 0.5810]


def _metrics(evals, train):
    return {"loss": pd.Series(train, index=STEPS), "eval_loss": pd.Series(evals, index=STEPS)}


def test_an_eval_loss_held_above_its_best_while_a_sparsely_logged_train_loss_fell_is_overfitting():
    found = detect_overfitting(_metrics(EVALS, TRAIN), Thresholds())
    assert [f.kind for f in found] == ["overfitting"] and found[0].step == 350


def test_a_training_loss_that_did_not_fall_is_no_overfitting():
    flat = TRAIN[:13] + [0.90, 0.89, 0.91, 0.90, 0.89, 0.90, 0.91]
    assert detect_overfitting(_metrics(EVALS, flat), Thresholds()) == []


def test_an_eval_loss_back_at_its_level_is_no_overfitting():
    back = EVALS[:13] + [1.2210, 1.2240, 1.2190, 1.2230, 1.2200, 1.2250, 1.2220]
    assert detect_overfitting(_metrics(back, TRAIN), Thresholds()) == []
