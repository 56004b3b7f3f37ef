"""Tests of analyzers/collapse.py: a training loss at zero with the eval loss following it.

From the day-10 judging fixes, each from a real case the corpus holds (tests/realworld/PROVENANCE.md, batch AR2)."""
from __future__ import annotations

import pandas as pd
from forensics.config import Thresholds  # noqa: E402


# ---- memorization needs held-out data that did not follow the training loss down -------------------------------------

from forensics.analyzers.collapse import detect_loss_collapse  # noqa: E402


def _descent_to_zero(eval_level) -> dict:
    """A masked-LM-like run: the training loss falls gradually from 0.8 to ~1e-4 over 2000 steps (logged every 10,
    grad_norm finite), evaluated every 100 steps."""
    steps = list(range(10, 2010, 10))
    train = [max(0.8 * 0.965 ** (s / 10), 1e-4 * (1 + 0.3 * ((s // 10) % 3))) for s in steps]
    eval_steps = list(range(100, 2100, 100))
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "grad_norm": pd.Series([0.1] * len(steps), index=steps, dtype="float64"),
            "eval_loss": pd.Series([eval_level(s) for s in eval_steps], index=eval_steps, dtype="float64")}


def test_a_training_loss_at_zero_with_the_eval_loss_following_it_down_is_not_memorization():
    run = _descent_to_zero(lambda s: max(0.55 * 0.96 ** (s / 10), 4e-5))
    assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == []


def test_a_training_loss_at_zero_with_the_eval_loss_held_up_is_still_memorization():
    run = _descent_to_zero(lambda s: 0.6)
    assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == ["memorization"]
