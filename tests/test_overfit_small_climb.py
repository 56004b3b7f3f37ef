"""A held-out loss that climbed at each of four or more evals after its best, every one of them three times its own
noise above the best and the last 1% above it, while the training loss fell (analyzers.overfit_train_rules
`climbed_clear_of_noise`): evals that only wobble around a level rise at each of k evals in a row once in (k + 1)!
tries, and the first rise already out of the noise says the turn is no wobble, however small in per cent.

bert2bert-bbc's card (Wenxin-Jiang_CS577-NLP_bert2bert-bbc, judged overfitting at step 1115): validation loss 0.6659
at epoch 4, then 0.6706, 0.6711, 0.6718, 0.6733 (+0.7% to +1.1%, the first 22 times its noise) while the training
loss fell 0.505 -> 0.380. Jaong's continued pre-training (judged healthy): four rises to +1.3% whose first is twice
its noise; Umang-Shikarvar's QLoRA (judged healthy): three rises to +0.25%."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"

STEPS = [223, 446, 669, 892, 1115, 1338, 1561, 1784]
EPOCHS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
TRAIN = [0.8246, 0.6396, 0.5582, 0.5050, 0.4611, 0.4254, 0.3967, 0.3800]
UP_TO_BEST = [0.6974, 0.6786, 0.6720, 0.6659]


def _found(evals, train=TRAIN):
    metrics = {"loss": pd.Series(train, index=STEPS), "eval_loss": pd.Series(evals, index=STEPS),
               "epoch": pd.Series(EPOCHS, index=STEPS)}
    return [(f.kind, f.step, f.evidence["best_step"]) for f in detect_overfitting(metrics, Thresholds())]


def test_a_climb_at_each_eval_out_of_the_noise_from_its_first_while_the_train_loss_fell_is_overfitting():
    assert _found(UP_TO_BEST + [0.6706, 0.6711, 0.6718, 0.6733]) == [("overfitting", 1115, 892)]


def test_the_same_climb_whose_first_rise_is_within_three_times_the_noise_is_not():
    # the first eval after the best 0.0004 above it: one thirtieth of the climb, inside the wobble of the later evals
    assert _found(UP_TO_BEST + [0.6663, 0.6690, 0.6700, 0.6733]) == []


def test_a_climb_that_ends_under_one_percent_above_the_best_is_not():
    assert _found(UP_TO_BEST + [0.6686, 0.6689, 0.6693, 0.6714]) == []


def test_the_same_climb_beside_a_training_loss_that_did_not_fall_is_not():
    flat = TRAIN[:1] + [0.505, 0.504, 0.505, 0.505, 0.503, 0.506, 0.504]  # at its floor from epoch 2
    assert _found(UP_TO_BEST + [0.6706, 0.6711, 0.6718, 0.6733], flat) == []


def test_three_rises_alone_are_no_climb():
    # a wobble rises at each of three evals in a row once in 24 tries (the NeMo review's 1.900, 1.912, 1.915, 1.921)
    assert _found(UP_TO_BEST + [0.6706, 0.6711, 0.6733] + [0.6733 + 0.0001]) == [("overfitting", 1115, 892)]
    assert _found(UP_TO_BEST + [0.6640, 0.6706, 0.6711, 0.6733]) == []


def test_the_real_card_is_overfitting_from_the_first_eval_above_the_best():
    a = forensics.analyze(CORPUS / "Wenxin-Jiang_CS577-NLP_bert2bert-bbc")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 1115)


def test_healthy_runs_whose_eval_loss_climbed_a_little_after_its_best_stay_healthy():
    for case in ("Jaong_Checkpoint-of-CPT", "Umang-Shikarvar_QLORA"):
        a = forensics.analyze(CORPUS / case)
        assert (a.status, a.first_incident) == ("healthy", None), case
