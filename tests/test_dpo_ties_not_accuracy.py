"""A reference-based DPO log's first steps have every reward exactly 0 (the policy is still its reference): TRL
counts each pair as ranked wrong, rewards/accuracies 0.0. Those points are no measurement of the pairs, so the
training accuracy's rise is read from the first real one (0.5 -> 0.9, not 0.0 -> 0.9)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.preference_pairs import pairs_told_apart
from forensics.config import Thresholds


def _dpo(first_accuracy: float, tied_steps: int = 2) -> dict[str, pd.Series]:
    steps = np.arange(1, 41)
    accuracy = np.linspace(first_accuracy, 0.9, len(steps))
    margins = np.linspace(0.01, 1.5, len(steps))
    chosen = np.linspace(0.005, 0.4, len(steps))
    accuracy[:tied_steps], margins[:tied_steps], chosen[:tied_steps] = 0.0, 0.0, 0.0
    loss = np.log1p(np.exp(-margins))
    loss[:tied_steps] = np.log(2)
    index = pd.Index(steps)
    return {"loss": pd.Series(loss, index), "rewards/accuracies": pd.Series(accuracy, index),
            "rewards/margins": pd.Series(margins, index), "rewards/chosen": pd.Series(chosen, index)}


def test_the_tied_first_steps_are_not_the_accuracys_start():
    _, train = pairs_told_apart(_dpo(0.5), Thresholds())
    assert train is not None and train.metric == "rewards/accuracies"
    assert train.first_step == 3 and train.start > 0.4


def test_an_accuracy_of_zero_with_rewards_that_moved_is_kept():
    metrics = _dpo(0.5, tied_steps=0)
    metrics["rewards/accuracies"].iloc[0] = 0.0  # margins not 0: a real batch that ranked every pair wrong
    _, train = pairs_told_apart(metrics, Thresholds())
    assert train is not None and train.first_step == 1 and train.start == 0.0
