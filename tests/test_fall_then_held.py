"""A loss that falls at each of its first four points and then holds the level it reached, noisily, learned: the
descent is ordered as noise orders four points once in 24, and larger than the later points' own noise (a Llama
LoRA logged every 50 steps: 2.053, 1.983, 1.901, 1.849, then 1.85-1.95 to the end). A start that wobbles, a descent
the later points undo, and a fall no larger than the later noise show nothing."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.fall_measure import fell_clearly
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.config import Thresholds

HELD = [2.053, 1.983, 1.901, 1.849, 1.913, 1.947, 1.868, 1.855, 1.881, 1.869]


def _loss(values):
    return pd.Series(values, index=np.arange(50, 50 * len(values) + 1, 50), dtype="float64")


def test_a_descent_over_the_first_four_points_then_held_is_a_fall():
    assert fell_clearly(_loss(HELD), Thresholds())[0]


def test_no_learning_evidence_stays_silent_on_it():
    assert detect_no_learning_evidence({"loss": _loss(HELD)}, Thresholds()) == []


def test_a_start_that_wobbles_shows_nothing():
    wobble = [2.053, 1.983, 2.001, 1.949, 1.913, 1.947, 1.968, 1.955, 1.981, 1.969]
    assert not fell_clearly(_loss(wobble), Thresholds())[0]


def test_a_descent_the_later_points_undo_shows_nothing():
    undone = [2.053, 1.983, 1.901, 1.849, 1.993, 2.047, 1.968, 2.055, 1.981, 2.019]
    assert not fell_clearly(_loss(undone), Thresholds())[0]


def test_a_descent_no_larger_than_the_later_noise_shows_nothing():
    small = [2.010, 2.000, 1.990, 1.985, 2.09, 1.91, 2.05, 1.93, 2.08, 1.90]
    assert not fell_clearly(_loss(small), Thresholds())[0]
