"""Tests of analyzers/overfitting.py: a quiet eval held above its best, a final eval that reloads
the best.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest

from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds


# P-Zande/nlp-team-4's Gemma-2B LoRA: an eval every 500 steps, the best at 2500 (epoch 0.86), then six evals
# 0.5-1.5% above it while the second epoch's training loss sits 8-10% lower.


_PZANDE_EVALS = [1.9394, 1.9079, 1.8940, 1.8913, 1.8792, 1.8886, 1.8998, 1.9075, 1.9048, 1.9053, 1.9017]


def _two_epochs(evals: list[float], second_epoch_level: float) -> dict:
    """550 training losses logged every 10 steps with a small wobble, 1.78 in the first epoch (to step 2920) and
    `second_epoch_level` after it, and the eval losses at every 500 steps."""
    steps = list(range(10, 5510, 10))
    wobble = [0.03, -0.02, 0.01, -0.03, 0.02]
    train = [(1.78 if s <= 2920 else second_epoch_level) + wobble[i % 5] for i, s in enumerate(steps)]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=list(range(500, 5501, 500)), dtype="float64")}


def test_a_quiet_eval_loss_held_just_above_its_best_while_the_training_loss_fell_is_overfitting():
    (found,) = detect_overfitting(_two_epochs(_PZANDE_EVALS, 1.58), Thresholds())
    assert (found.kind, found.severity, found.step) == ("overfitting", "warning", 3000)
    assert "training loss keeps falling" in found.message


@pytest.mark.parametrize("evals, second_epoch_level", [
    (_PZANDE_EVALS, 1.77),  # the training loss did not fall further: a plateau of both, no gap opening
    (_PZANDE_EVALS[:5] + [1.8800, 1.8810, 1.8798, 1.8805, 1.8801, 1.8803], 1.58),  # held within 0.1% of the best
    (_PZANDE_EVALS[:5] + [1.8886, 1.8998, 1.8790, 1.9075, 1.9048, 1.9053], 1.58),  # back under the best once
])
def test_an_eval_loss_near_its_best_or_a_training_loss_that_did_not_fall_is_not_overfitting(evals, second_epoch_level):
    assert detect_overfitting(_two_epochs(evals, second_epoch_level), Thresholds()) == []


# ---- three evals climbing a little while the training loss falls away; the best checkpoint evaluated again ---------

def _twenty_epochs(evals: list[float], steps: list[int], end_level: float, reach: int = 300) -> dict:
    """A small set trained for many epochs: the loss every 5 steps from 2.2 down to `end_level` by step `reach` (flat
    after), with a wobble, and the evals at `steps`."""
    train_steps = list(range(5, 365, 5))
    wobble = [0.06, -0.05, 0.03, -0.04]
    train = [max(end_level, 2.2 - (2.2 - end_level) * s / reach) + wobble[i % 4] for i, s in enumerate(train_steps)]
    return {"loss": pd.Series(train, index=train_steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=steps, dtype="float64")}


def test_three_evals_climbing_two_percent_while_the_training_loss_falls_away_is_overfitting():
    (found,) = detect_overfitting(_twenty_epochs([1.4668, 1.4736, 1.5020], [100, 200, 300], 0.4), Thresholds())
    assert (found.kind, found.step) == ("overfitting", 200)


def test_a_final_eval_equal_to_the_best_is_the_best_checkpoint_reloaded_not_a_return_to_it():
    metrics = _twenty_epochs([1.466796875, 1.4736328125, 1.501953125, 1.466796875], [100, 200, 300, 360], 0.4)
    (found,) = detect_overfitting(metrics, Thresholds())
    assert (found.kind, found.step) == ("overfitting", 200)


@pytest.mark.parametrize("evals, end_level, reach", [
    ([1.4668, 1.4736, 1.5020], 1.45, 60),  # the training loss flat from before the first eval: no gap opening
    ([1.4668, 1.4736, 1.4790], 0.4, 300),  # under 2% above the best: noise
    ([1.4668, 1.4736, 1.4700], 0.4, 300),  # not climbing
])
def test_few_evals_near_their_best_or_without_the_training_loss_falling_are_not_overfitting(evals, end_level, reach):
    assert detect_overfitting(_twenty_epochs(evals, [100, 200, 300], end_level, reach), Thresholds()) == []


def test_a_final_table_value_equal_to_the_best_rounded_is_kept():
    from forensics.analyzers.overfitting import without_best_reevaluated
    metrics = _twenty_epochs([1.15, 1.16, 1.17, 1.18, 1.15], [100, 200, 300, 340, 360], 0.4)
    assert len(without_best_reevaluated(metrics["eval_loss"])) == 5


def test_a_final_eval_equal_to_a_later_eval_not_the_best_is_kept():
    metrics = _twenty_epochs([1.4668, 1.5020, 1.5020], [100, 200, 300], 0.4)
    from forensics.analyzers.overfitting import without_best_reevaluated
    assert len(without_best_reevaluated(metrics["eval_loss"])) == 3


def test_an_eval_loss_back_at_the_level_it_held_before_a_lucky_low_is_not_overfitting():
    evals = [1.23, 1.22, 1.215, 1.212, 1.200, 1.213, 1.214, 1.212, 1.215, 1.213, 1.214]
    assert detect_overfitting(_two_epochs(evals, 1.58), Thresholds()) == []
