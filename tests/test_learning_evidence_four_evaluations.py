"""Tests of analyzers/learning_evidence.py: sparse evaluations, a flat log that starts
mid-run.

From the day-10 judging fixes, each from a real case the corpus holds (tests/realworld/PROVENANCE.md, batch AR2)."""
from __future__ import annotations

import numpy as np
import pandas as pd


# ---- a short log lower at every point than at the one before ---------------------------------------------------------

from forensics.analyzers.learning_evidence import detect_no_learning_evidence  # noqa: E402
from forensics.config import Thresholds  # noqa: E402


def _sparse_run(train: list[float], evals: list[float]) -> dict:
    steps = [500 * (k + 1) for k in range(len(train))]
    eval_steps = [400 * (k + 1) for k in range(len(evals))]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=eval_steps, dtype="float64")}


def test_an_eval_loss_lower_at_each_of_four_evaluations_is_evidence_of_learning():
    """HannahMariamj's LoRA: three training points and four evals, each lower than the one before (-33%, -29%);
    the fall slows, so the steps' spread reads as noise as large as the fall."""
    run = _sparse_run([5.824, 4.270, 3.922], [4.9701, 4.0301, 3.5932, 3.5199])
    assert detect_no_learning_evidence(run, Thresholds()) == []


def test_four_evaluations_that_wander_or_fall_a_little_are_not():
    wander = _sparse_run([5.824, 5.80, 5.83], [4.97, 4.93, 4.98, 4.95])
    # every step down, 0.6% in all: under the 1% a held-out set lower at every evaluation needs (fall_measure's
    # _HELD_OUT_FALL, set from the corpus: the non-learning runs' such falls were 0.13% and 0.63%, AkshayPethe's
    # learning one 1.27%; this test held 1.2% as "a little" when the bar was 3%)
    barely = _sparse_run([5.824, 5.80, 5.83], [4.97, 4.96, 4.95, 4.94])
    for run in (wander, barely):
        assert [f.kind for f in detect_no_learning_evidence(run, Thresholds())] == ["no_learning_evidence"]


def test_a_flat_log_that_starts_mid_run_is_not_learned_by_its_first_point():
    """A reviewer's resumed run: 40 points from step 1010, flat at 1.5 (1.3% noise), its first point 0.065 higher
    (the resume's first batch): the first point of a log that starts mid-run is no start to have fallen from."""
    rng = np.random.default_rng(7)
    steps = [1010 + 10 * i for i in range(40)]
    values = [1.5 * (1 + 0.013 * rng.standard_normal()) + (0.0650 if i == 0 else 0) for i in range(40)]
    values[0] = 1.6048
    run = {"loss": pd.Series(values, index=steps, dtype="float64")}
    assert [f.kind for f in detect_no_learning_evidence(run, Thresholds())] == ["no_learning_evidence"]
