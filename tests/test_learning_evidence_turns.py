"""A training loss that swings by turns (TRL's group_by_length: long and short batches logged in turn) read like with
like: one turn's own points lower at every point, by 10% in all, is learning evidence (Prishi99's Llama-2 QLoRA); a
sawtooth whose turns do not fall at every point, or whose other turn rises, still gets its warning."""
from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"
STEPS = range(25, 275, 25)


def _loss(values: list[float]) -> dict:
    return {"loss": pd.Series(values, index=list(STEPS)[:len(values)], dtype="float64")}


def _kinds(run: dict) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(run, Thresholds())]


# Prishi99's Trainer table, logging every 25 of 250 steps: odd rows 1.408 -> 1.158 at every row (-18%)
PRISHI99 = [1.4081, 1.6626, 1.2143, 1.4444, 1.1765, 1.3656, 1.1735, 1.4677, 1.1583, 1.5418]


def test_a_sawtooth_whose_one_turn_falls_at_every_point_shows_learning():
    run = _loss(PRISHI99)
    assert _kinds(run) == []
    shown = learning_shown(run, Thresholds())
    assert shown is not None and shown.metric == "loss"
    assert (shown.start, shown.end) == (1.4081, 1.1583)


def test_the_group_by_length_run_is_healthy():
    analysis = forensics.analyze(CORPUS / "Prishi99_AI_Pose_Estimation")
    assert analysis.status == "healthy" and analysis.first_incident is None


def test_a_flat_sawtooth_whose_turns_wobble_still_warns():
    run = _loss([1.40, 1.66, 1.42, 1.64, 1.39, 1.67, 1.41, 1.65, 1.40, 1.66])
    assert _kinds(run) == ["no_learning_evidence"]
    assert learning_shown(run, Thresholds()) is None


def test_a_sawtooth_whose_other_turn_rises_still_warns():
    """The odd rows fall at every row as Prishi99's do, but the even rows climb 1.5 -> 1.9: the pairs do not fall."""
    run = _loss([1.4081, 1.5, 1.2143, 1.6, 1.1765, 1.7, 1.1735, 1.8, 1.1583, 1.9])
    assert _kinds(run) == ["no_learning_evidence"]


def test_a_turn_of_four_points_falling_is_not_enough():
    """Eight points: each turn has four, ordered so by noise once in 24. (The log is also under the ten points a swing
    by turns is read over, so the turn's own count is asked of the turn itself: its four points fall 17.7% at every
    point, and are still too few, where a fifth makes them enough.)"""
    from forensics.analyzers.secondary_evidence import lower_at_every_point
    run = _loss([1.4081, 1.6626, 1.2143, 1.4444, 1.1765, 1.3656, 1.1583, 1.4677])
    assert learning_shown(run, Thresholds()) is None
    assert not lower_at_every_point(np.array([1.4081, 1.2143, 1.1765, 1.1583]))
    assert lower_at_every_point(np.array([1.4081, 1.2143, 1.1765, 1.1735, 1.1583]))


def test_a_turn_falling_under_ten_percent_is_not_enough():
    """The odd rows fall at every row, 1.40 -> 1.36 (-2.9%): a drift that small is no fall of like against like."""
    run = _loss([1.40, 1.62, 1.39, 1.66, 1.38, 1.60, 1.37, 1.65, 1.36, 1.62])
    assert _kinds(run) == ["no_learning_evidence"]


def test_the_rule_stays_silent_on_a_loss_that_does_not_swing_by_turns():
    """A healthy steady fall has no turns: its evidence is the fall itself, not this rule's."""
    from forensics.analyzers.secondary_evidence import a_turn_fell_at_every_point
    run = _loss([2.0, 1.8, 1.7, 1.6, 1.55, 1.5, 1.45, 1.42, 1.4, 1.38])
    assert a_turn_fell_at_every_point(run["loss"]) is None
    assert _kinds(run) == []
