"""Tests of the overfitting rule (analyzers/overfitting.py) after a steep descent.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

from support.written_runs import _analyze, _kinds, _trainer_state


# ---- overfitting._settled_above's lucky-low guard -----------------------------------------------------------------


def test_eval_rising_three_epochs_after_a_steep_descent_is_overfitting(tmp_path):
    """Stands for an epoch-wise fine-tune evaluated once an epoch: eval 3.0, 2.2, 1.8, 1.5 (best), then 1.75, 1.85,
    1.95 (each above the last, 17-30% over the best) while the training loss falls. The new guard compares the
    median after the best (1.85) with the median of the whole descent before it (2.2) and calls the best a lucky low:
    healthy (before the change: overfitting at 500). Fix: overfitting._settled_above: 'back at the level before'
    must compare with the evals just before the best (1.8), not the steep descent's median, or not apply when the
    evals after the best rise at each point."""
    evals = [3.0, 2.2, 1.8, 1.5, 1.75, 1.85, 1.95]
    hist = []
    for s in range(10, 710, 10):
        hist.append({"step": s, "epoch": s / 100, "loss": round(2.5 * np.exp(-s / 390) + 0.02 * np.sin(s), 4),
                     "learning_rate": 2e-5})
        if s % 100 == 0:
            hist.append({"step": s, "epoch": s / 100, "eval_loss": evals[s // 100 - 1]})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "overfitting" in [k for k, _ in _kinds(a)], _kinds(a)
