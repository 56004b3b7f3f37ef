"""A short log's fall is measured against its noise about the trend, not against point-to-point differences that hold
the fall itself or a swing by turns: a batch-1 loss that falls at each of its first five steps and then holds a
level, its later steps swinging up and down by turns about it, learned (a LoRA at batch 1, logged every step: 4.654,
4.454, 4.266, 4.197, 4.091, then 4.30, 3.95, 4.19, 3.80, 4.20). A short log whose descent is no larger than the scatter
of the points after it, or whose later points come back up, still shows nothing."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.fall_measure import fell_clearly
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.config import Thresholds

DESCENT_THEN_SWING = [4.654, 4.454, 4.266, 4.197, 4.091, 4.302, 3.948, 4.191, 3.795, 4.197]


def _loss(values):
    return pd.Series(values, index=np.arange(1, len(values) + 1), dtype="float64")


def _kinds(values):
    return [f.kind for f in detect_no_learning_evidence({"loss": _loss(values)}, Thresholds())]


def test_a_five_point_descent_then_a_level_swung_about_by_turns_is_a_fall():
    assert fell_clearly(_loss(DESCENT_THEN_SWING), Thresholds())[0]


def test_no_learning_evidence_stays_silent_on_a_descent_then_a_swung_level():
    assert _kinds(DESCENT_THEN_SWING) == []


def test_a_descent_smaller_than_the_later_scatter_still_shows_nothing():
    """Five points each a little lower (4.30 -> 4.10), then points scattered 3.90-4.35 about 4.25: the descent is
    inside the scatter of the level the log holds."""
    small = [4.30, 4.25, 4.20, 4.15, 4.10, 4.35, 3.95, 4.30, 3.90, 4.25]
    assert _kinds(small) == ["no_learning_evidence"]


def test_a_descent_the_later_points_undo_still_shows_nothing():
    """The same five-point descent, then points back up about the start (4.45-4.70): nothing held."""
    undone = DESCENT_THEN_SWING[:5] + [4.70, 4.45, 4.66, 4.48, 4.62]
    assert _kinds(undone) == ["no_learning_evidence"]
