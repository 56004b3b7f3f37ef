"""A short RL reward log that starts on its lowest point and ends on its highest rose (analyzers.learning_evidence
`_rose_from_its_lowest_to_its_highest`): too noisy for a 10-point trend, but the rank pair comes by chance 1 time in
90. Real case: yuzhaouoe_GUI-Cursor-Moving (tests/realworld), verl GRPO, critic/score/mean 0.572 at step 1 (the
untouched policy), 0.68-0.83 after, 0.834 at step 10, judged healthy."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
from forensics.config import Thresholds

CASE = Path(__file__).parent / "realworld" / "yuzhaouoe_GUI-Cursor-Moving"
SCORES = [0.5722, 0.7240, 0.7714, 0.6806, 0.8110, 0.7542, 0.7994, 0.8050, 0.7238, 0.8335]  # the case's, rounded


def _reward(values) -> dict:
    return {"reward": pd.Series(values, index=range(1, len(values) + 1), dtype="float64")}


def test_the_verl_grpo_console_whose_reward_rose_from_its_first_step_is_healthy():
    a = forensics.analyze(CASE)
    assert a.status == "healthy" and a.first_incident is None
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"]


def test_a_ten_point_reward_from_its_lowest_to_its_highest_shows_learning():
    assert learning_shown(_reward(SCORES), Thresholds()) is not None
    assert detect_no_learning_evidence(_reward(SCORES), Thresholds()) == []


def test_the_same_points_in_another_order_show_nothing():
    """Guard: the rank pair, not the values, is the evidence: the first point no longer the lowest, or the last no
    longer the highest, and the 10 points are noise again."""
    for values in ([*SCORES[:4], SCORES[9], *SCORES[5:9], SCORES[4]],  # the highest at step 5
                   [SCORES[4], SCORES[1], SCORES[2], SCORES[3], SCORES[0], SCORES[5], SCORES[6], SCORES[9], SCORES[8],
                    SCORES[7]]):  # the lowest at step 5, the highest at step 8
        assert [f.kind for f in detect_no_learning_evidence(_reward(values), Thresholds())] == ["no_learning_evidence"]


def test_a_shorter_log_is_not_read_by_rank():
    """Guard: on 9 points or fewer the pair comes by chance too often (1 in 72 for 9, 1 in 20 for 5)."""
    short = [0.572, 0.70, 0.64, 0.71, 0.66, 0.69, 0.65, 0.68, 0.73]
    assert learning_shown(_reward(short), Thresholds()) is None
