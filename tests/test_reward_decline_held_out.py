"""Tests of analyzers/reward_decline.py: held-out rewards.

From review rev19 of the day's readers and rules, each finding mended."""
from __future__ import annotations

import numpy as np
import pandas as pd
from forensics.analyzers.reward_decline import detect_reward_decline
from forensics.config import Thresholds


_VAL = "val-core/openai/gsm8k/reward/mean@1"


def _flat_val(seed: int, name: str = _VAL) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Series(rng.binomial(1319, 0.85, size=21) / 1319, index=np.arange(0, 210, 10), dtype="float64")


def test_a_flat_held_out_reward_is_no_decline():
    """A test set answered at the same rate throughout (binomial noise of 1319 questions): over 40 seeds, at most one
    reads as a decline (a 3-sigma test), where the robust noise of tied values once read far more."""
    train = pd.Series(0.5 + 0.25 * (1 - np.exp(-np.arange(1, 201) / 60)), index=np.arange(1, 201))
    declines = sum(bool(detect_reward_decline({"reward": train, _VAL: _flat_val(seed)}, Thresholds()))
                   for seed in range(40))
    assert declines <= 1


def test_several_held_out_rewards_are_judged_as_one():
    """Four test sets sliding together are one decline, named as their mean; four flat ones are none."""
    train = pd.Series(0.5 + 0.25 * (1 - np.exp(-np.arange(1, 201) / 60)), index=np.arange(1, 201))
    steps = np.arange(0, 210, 10)
    level = np.where(steps < 80, 0.85, 0.80)
    sliding = {f"val-core/set{k}/reward/mean@1": pd.Series(level + 0.001 * ((steps // 10 + k) % 3), index=steps)
               for k in range(4)}
    found = detect_reward_decline({"reward": train, **sliding}, Thresholds())
    assert [f.kind for f in found] == ["reward_decline"] and "the mean of 4 held-out rewards" in found[0].message
    flat = {f"val-core/set{k}/reward/mean@1": _flat_val(100 + k) for k in range(4)}
    assert detect_reward_decline({"reward": train, **flat}, Thresholds()) == []
