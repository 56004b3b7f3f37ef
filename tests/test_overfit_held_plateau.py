"""A held-out loss that rose after its best and held a plateau above it (analyzers.overfit_train_rules
`held_above_while_train_fell`): three evals after the best, each clearly above it for the eval loss's own noise,
while the training loss fell, is overfitting though the plateau does not climb (the multi-epoch SFT signature: the
eval loss jumps at the epoch boundary and stays up while the training loss steps down).

dolphin-2.9-llama3-8b's card (YinanWusoymilk_hf-readme_dolphin29, judged overfitting at step 4995): validation loss
lowest 0.6168 at step 4440 (epoch 1.99), then 0.6646, 0.6619, 0.6602 at all three evals of epoch 3 (+7.0% to +7.7%,
about 13 times its point-to-point noise) while the training loss fell ~0.52 -> 0.38-0.40. wangd12rpi's FinLoRA
sentiment card (judged healthy): 0.2092 at its best, then 0.2170, 0.2148, 0.2154 (+2.7% to +3.7%, under twice its
noise on a 2% split) beside a training loss that fell: the wobble of a small eval set, silent."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"

STEPS = [1, 555, 1110, 1665, 2220, 2775, 3330, 3885, 4440, 4995, 5550, 6105]
EPOCHS = [0.0005, 0.25, 0.5, 0.75, 1.0, 1.24, 1.49, 1.74, 1.99, 2.23, 2.48, 2.73]
TRAIN = [1.146, 0.6962, 0.6857, 0.6592, 0.6465, 0.5295, 0.5302, 0.5188, 0.521, 0.3968, 0.3776, 0.3983]
UP_TO_BEST = [1.1064, 0.6636, 0.6503, 0.6419, 0.6317, 0.6408, 0.6351, 0.6227, 0.6168]
PLATEAU = [0.6646, 0.6619, 0.6602]


def _found(evals, train=TRAIN):
    metrics = {"loss": pd.Series(train, index=STEPS), "eval_loss": pd.Series(evals, index=STEPS),
               "epoch": pd.Series(EPOCHS, index=STEPS)}
    return [(f.kind, f.step, f.evidence["best_step"]) for f in detect_overfitting(metrics, Thresholds())]


def test_three_evals_held_clearly_above_the_best_while_the_train_loss_fell_is_overfitting():
    assert _found(UP_TO_BEST + PLATEAU) == [("overfitting", 4995, 4440)]


def test_a_plateau_within_three_times_the_eval_noise_of_the_best_is_not():
    # +1.1% to +1.2%: above the best at each eval, but under 3 x the later half's point-to-point noise (0.006, 2.9%)
    assert _found(UP_TO_BEST + [0.6240, 0.6238, 0.6243]) == []


def test_one_eval_of_the_three_back_near_the_best_is_not():
    # the plateau's smallest rise decides: one eval 0.3% above the best is noise however high the others sit
    assert _found(UP_TO_BEST + [0.6646, 0.6186, 0.6602]) == []


def test_the_same_plateau_beside_a_training_loss_that_did_not_fall_is_not():
    flat = TRAIN[:5] + [0.52, 0.53, 0.52, 0.521, 0.52, 0.53, 0.52]
    assert _found(UP_TO_BEST + PLATEAU, flat) == []


def test_the_real_card_is_overfitting_from_the_first_eval_of_its_third_epoch():
    a = forensics.analyze(CORPUS / "YinanWusoymilk_hf-readme_dolphin29")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 4995)


def test_a_healthy_card_whose_eval_wobbled_above_its_best_stays_healthy():
    a = forensics.analyze(CORPUS / "wangd12rpi_FinLoRA-sentiment")
    assert (a.status, a.first_incident) == ("healthy", None)
