"""Memorization of fresh models logged at a few prints (forensics/analyzers/memorization.py).

Memorization the tool missed (fx-memomiss): a model trained from random weights, logged at a few long means that
fall at every point down to a loss no held-out text reaches, with nothing held out, is memorization though too few
points lie under the pre-training floor to show the loss settled there."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.memorization import memorized_from_scratch
from forensics.config import Thresholds

TH = Thresholds()
CORPUS = Path(__file__).parent / "realworld"


def _printed_every(every: int, loss: list[float], first_step: int | None = None) -> dict[str, pd.Series]:
    """A hand-written loop's prints: one loss every `every` steps, from `first_step` (`every` unless given)."""
    start = every if first_step is None else first_step
    return {"loss": pd.Series(loss, index=np.arange(len(loss)) * every + start, dtype="float64")}


def test_a_fresh_model_falling_at_every_one_of_a_few_prints_to_under_a_fifth_of_a_nat_is_memorized():
    """1-sang_data's shape: a seq2seq GRU on 8 sentence pairs, printed every 1,000 iterations."""
    (f,) = memorized_from_scratch(_printed_every(1000, [1.3149, 0.3536, 0.1966, 0.0960, 0.0492]), TH)
    assert f.kind == "memorization" and f.severity == "warning"
    assert f.step == 2000  # where the loss went under 1 nat (and 0.5), the second print
    assert "every one of its 5 logged points" in f.message and f.evidence["few_points"] == 5


def test_a_sparse_fresh_log_with_only_its_last_two_points_under_the_floor_is_memorized():
    """Azreal18_TSAI-ERAv2-S21's shape: a GPT-2 from scratch printed every 50 steps, stopped on a target loss."""
    loss = [10.9836, 5.5418, 4.3798, 3.6537, 2.7985, 1.9830, 1.0563, 0.3954, 0.0970]
    (f,) = memorized_from_scratch(_printed_every(50, loss, first_step=0), TH)
    assert f.kind == "memorization" and f.step == 350


@pytest.mark.parametrize("loss", [
    [3.884, 2.754, 1.816, 1.116, 0.771, 0.569, 0.453, 0.344, 0.394],  # factoryfist-wq's shape: rises at its end
    [3.9, 2.7, 1.8, 1.1, 0.77, 0.57, 0.45, 0.37, 0.31],  # falls at every point, but ends above a fifth of a nat
    [3.9, 2.7, 1.8, 1.1, 0.77, 0.57, 0.15],  # only its last point under the floor: one point is no trend
    [1.2, 0.9, 0.6, 0.45, 0.3, 0.15],  # under tenfold from its first point to its last
    [3.9, 2.7, 2.9, 1.1, 0.45, 0.3, 0.15],  # rises at one print: a noisy log, left to the settling rules
])
def test_a_few_prints_that_rise_end_above_a_fifth_of_a_nat_or_fell_little_are_not_memorized(loss):
    assert memorized_from_scratch(_printed_every(10, loss), TH) == []


def test_a_few_falling_prints_with_an_eval_loss_are_left_to_the_overfitting_rules():
    log = _printed_every(1000, [1.3149, 0.3536, 0.1966, 0.0960, 0.0492])
    log["eval_loss"] = pd.Series([1.5, 1.4, 1.6, 1.8, 2.0], index=log["loss"].index, dtype="float64")
    assert memorized_from_scratch(log, TH) == []


@pytest.mark.parametrize("case, judged, tolerance", [
    ("1-sang_data", 2000, 1000),  # was healthy: 1.31 -> 0.049 over five prints
    ("Azreal18_TSAI-ERAv2-S21", 350, 50),  # was healthy: under 0.5 at its last two prints only
])
def test_real_fresh_models_falling_at_every_print_are_memorized(case, judged, tolerance):
    import forensics
    analysis = forensics.analyze(CORPUS / case)
    assert analysis.status == "warning" and analysis.first_incident.kind == "memorization"
    assert abs(analysis.first_incident.step - judged) <= tolerance


@pytest.mark.parametrize("case", [
    "GoLok56_lyric_generation",  # falls at every one of 25 points to 0.1025, but from 0.213: no tenfold descent logged
    "YYYYXL1004_NLP2",  # falls at every one of 20 points, 8.65 -> 0.462: ends above a fifth of a nat
    "StevenSchuerstedt_foreigner",  # falls at every one of 8 points, 1.12 -> 0.498
])
def test_real_fresh_models_judged_healthy_that_fall_at_every_point_stay_healthy(case):
    import forensics
    assert forensics.analyze(CORPUS / case).status == "healthy"
