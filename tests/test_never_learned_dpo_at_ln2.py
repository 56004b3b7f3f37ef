"""Tests of analyzers/never_learned.py: a DPO loss held at ln 2.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds
import math  # noqa: E402


# ---- a hand-written DPO loss printed divided by its accumulation steps, held at ln 2 / k ------------------------------

from forensics.analyzers.never_learned import detect_dpo_loss_never_under_chance  # noqa: E402


def _dpo_printed(level: float, drift: float = 0.0) -> dict:
    wobble = [0.0025, -0.0021, 0.0014, -0.0030, 0.0007]
    values = [level + wobble[i % 5] - drift * i / 500 for i in range(500)]
    values[0] = level
    return {"loss": pd.Series(values, index=list(range(1, 501)), dtype="float64")}


def test_a_dpo_loss_held_at_ln2_over_its_accumulation_steps_never_learned():
    (found,) = detect_dpo_loss_never_under_chance(_dpo_printed(math.log(2) / 5), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 1)
    assert "ln 2 / 5" in found.message


@pytest.mark.parametrize("level, drift", [
    (math.log(2) / 5, 0.04),  # starts at ln 2 / 5 and falls: the policy learned
    (0.1500, 0.0),  # flat, but at no share of ln 2: not a DPO loss at chance
])
def test_a_dpo_loss_that_moves_or_sits_elsewhere_is_not_held_at_chance(level, drift):
    assert detect_dpo_loss_never_under_chance(_dpo_printed(level, drift), Thresholds()) == []


# ---- a DPO loss at ln 2 whose reward margins stay at 0 (gradients flowing, the rate too small to move them) ----------

from forensics.analyzers.never_learned import detect_never_learned  # noqa: E402


def _dpo_at_ln2(margin_scale: float) -> dict:
    steps = list(range(10, 190, 10))
    wobble = [-0.0016, -0.0005, -0.0001, 0.0017, 0.0003, 0.0008]
    signs = [1, -1, 1, -1, 0.5, -0.5]
    return {"loss": pd.Series([math.log(2) + wobble[i % 6] for i in range(18)], index=steps, dtype="float64"),
            "rewards/margins": pd.Series([margin_scale * signs[i % 6] for i in range(18)], index=steps,
                                         dtype="float64"),
            "rewards/accuracies": pd.Series([0.48, 0.52, 0.5, 0.49, 0.51, 0.5] * 3, index=steps, dtype="float64"),
            "grad_norm": pd.Series([2.0] * 18, index=steps, dtype="float64")}


def test_a_dpo_loss_at_ln2_with_reward_margins_at_zero_never_learned():
    (found,) = detect_never_learned(_dpo_at_ln2(0.004), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 10)
    assert "reward margin" in found.message


def test_a_dpo_loss_near_ln2_whose_margins_move_is_not_called_never_learned():
    assert detect_never_learned(_dpo_at_ln2(0.05), Thresholds()) == []


def test_a_dpo_loss_at_ln2_with_margins_near_a_hundredth_and_tied_pairs_never_learned():
    """Arun-vEDU's LoRA DPO at LR 5e-7: margins up to 0.0138 and a pair accuracy of 0.13-0.17 (tied pairs, counted
    wrong) beside a loss at ln 2 +- 0.005 for three epochs; before, a margin over 0.01 or an accuracy off 0.5 in
    either direction said the pairs had moved."""
    metrics = _dpo_at_ln2(0.0138)
    metrics["loss"].iloc[[1, 7]] = [0.688, 0.6883]  # 0.0051 under ln 2, as its margin of 0.0138 explains
    metrics["rewards/accuracies"] = pd.Series([0.134, 0.15, 0.171, 0.144, 0.14, 0.16] * 3, index=metrics["loss"].index)
    (found,) = detect_never_learned(metrics, Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 10)


def test_a_dpo_loss_at_ln2_whose_pairs_are_ranked_right_is_not_called_never_learned():
    metrics = _dpo_at_ln2(0.004)
    metrics["rewards/accuracies"] = pd.Series([0.6, 0.62, 0.65, 0.6, 0.63, 0.64] * 3, index=metrics["loss"].index)
    assert detect_never_learned(metrics, Thresholds()) == []
