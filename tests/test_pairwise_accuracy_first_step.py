"""Tests of the DPO learning evidence: an accuracy of zero at the first step is no rise.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

from support.written_runs import _analyze, _kinds, _trainer_state


# ---- learning_evidence._ranked_wrong -------------------------------------------------------------------------------


def test_dpo_accuracy_zero_on_its_first_step_is_no_rise(tmp_path):
    """Stands for a TRL DPO run from an SFT'd policy whose loss starts above 1 (an LM term) and falls to 0.95, while
    rewards/accuracies is 0.0 on the first logged step (policy == reference: every margin 0, as every reference-based
    TRL DPO logs) then 0.25-0.5 at random on 8-pair batches, margins about -0.05: pairs still ranked the wrong way.
    The first tenth's mean holds the forced 0.0, so the accuracy 'rose' 0.19 and _ranked_wrong says no: healthy
    (before: no_learning_evidence). Fix: learning_evidence._ranked_wrong: leave out the first logged point (or any
    accuracy exactly 0 with margins 0) from the start level, or ask the rise of the median of the first and last
    halves."""
    rng = np.random.default_rng(1)
    hist = []
    for i in range(20):
        s = (i + 1) * 10
        acc = 0.0 if i == 0 else float(rng.choice([0.25, 0.375, 0.5, 0.375, 0.25, 0.5, 0.375]))
        hist.append({"step": s, "epoch": s / 200, "loss": round(1.35 - 0.4 * i / 19 + rng.normal(0, 0.03), 4),
                     "rewards/accuracies": acc, "rewards/margins": round(-0.05 + rng.normal(0, 0.05), 4),
                     "rewards/chosen": round(-0.1 * i / 20, 4), "rewards/rejected": round(-0.08 * i / 20, 4),
                     "logps/chosen": -300.0, "logps/rejected": -290.0, "learning_rate": 5e-7})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" in [k for k, _ in _kinds(a)], _kinds(a)
