"""Tests of the masked-NaN rule: a NaN eval from the first eval beside a memorized zero.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

from support.written_runs import _analyze, _kinds, _trainer_state


# ---- metrics._beside_nan_eval --------------------------------------------------------------------------------------


def test_nan_eval_from_the_first_eval_beside_a_memorized_zero_is_no_masked_nan(tmp_path):
    """Stands for an SFT on a tiny dataset with a broken eval split (TRL's completion-only collator finds no
    response key in the eval examples, every label -100: eval_loss NaN from the first evaluation on) while the
    training loss falls smoothly 2.0 -> 0.0022 -> 0.0001 and then logs 0.0 (HF rounds logged losses to 4 digits).
    The tool adds masked_nan_loss (error) at 700: 'the evaluation ran NaN weights, so the training loss was NaN too'.
    The eval was NaN while the weights were fine (never finite before, training loss falling); the NaN eval tells
    nothing about the weights. Fix: metrics._beside_nan_eval: only a NaN eval that follows finite evals (the weights
    went bad), and not after a training loss that has descended smoothly to the rounding floor."""
    hist = []
    for s in range(10, 1010, 10):
        hist.append({"step": s, "epoch": s / 100, "loss": round(2.0 * float(np.exp(-s / 60.0)), 4),
                     "learning_rate": 2e-5})
        if s % 100 == 0:
            hist.append({"step": s, "epoch": s / 100, "eval_loss": float("nan")})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "masked_nan_loss" not in [k for k, _ in _kinds(a)], [f.message for f in a.findings]
