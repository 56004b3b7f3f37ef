"""Tests of analyzers/grad_norm_level.py: grad norms in the thousands.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
from forensics.config import Thresholds


# ---- grad norms in the thousands at every logged step ----------------------------------------------------------------

from forensics.analyzers.grad_norm_level import detect_huge_grad_norm  # noqa: E402


def _norms(grads: list[float]) -> dict:
    steps = list(range(500, 500 * len(grads) + 1, 500))  # aniketbakre's bart-base: a point every 500 steps
    return {"loss": pd.Series([1.1642, 0.0489, 0.0452, 0.0435, 0.0419][:len(grads)], index=steps, dtype="float64"),
            "grad_norm": pd.Series(grads, index=steps, dtype="float64")}


def test_grad_norms_in_the_thousands_at_every_logged_step_are_huge():
    (found,) = detect_huge_grad_norm(_norms([11188, 8042, 61651, 8775, 8959]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("grad_norm_huge", "warning", 500)


def test_grad_norms_in_the_hundreds_or_a_few_huge_ones_are_not():
    assert detect_huge_grad_norm(_norms([450.0, 380.0, 620.0, 300.0, 410.0]), Thresholds()) == []
    assert detect_huge_grad_norm(_norms([11188, 8042, 61651, 8.7, 8.9]), Thresholds()) == []
