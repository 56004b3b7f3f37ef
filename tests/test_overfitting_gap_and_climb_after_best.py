"""Tests of the overfitting rule (analyzers/overfitting.py): a gap opening, evals climbing
after the best.

From the session-8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


def _one_eval_an_epoch(evals: list[float], levels: tuple[float, float, float] = (0.12, 0.05, 0.02)) -> dict:
    """Three epochs of 176 steps, the training loss logged every 5 steps from 0.63 at the first point, then at each
    epoch's level of `levels`, an eval at the end of each epoch."""
    steps = list(range(5, 529, 5))
    train = [0.63 if s == 5 else levels[min(2, (s - 1) // 176)] * (1.05 if s % 10 else 0.95) for s in steps]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=[176, 352, 528], dtype="float64")}


def test_evals_rising_after_the_first_while_the_training_loss_keeps_falling_is_overfitting():
    """Obychenkov/CSE234-hardneg: eval 0.301, 0.322, 0.346 at the end of epochs 1-3 (the first the best, the last
    just under 15% above it) while the training loss's epoch medians fell 0.122 -> 0.049 -> 0.021."""
    from forensics.analyzers.overfitting import detect_overfitting
    (found,) = detect_overfitting(_one_eval_an_epoch([0.3011, 0.3224, 0.3459]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("overfitting", "warning", 352)


@pytest.mark.parametrize("evals, levels", [
    ([0.3011, 0.2950, 0.2900], (0.12, 0.05, 0.02)),  # the held-out loss kept falling: learning
    ([0.3011, 0.3030, 0.3020], (0.12, 0.05, 0.02)),  # within 1% of the best: flat, not a rise
    ([0.3011, 0.3224, 0.3459], (0.12, 0.12, 0.115)),  # the training loss stopped falling too: no gap opening
])
def test_a_first_eval_best_without_a_gap_opening_is_not_overfitting(evals, levels):
    from forensics.analyzers.overfitting import detect_overfitting
    assert detect_overfitting(_one_eval_an_epoch(evals, levels), Thresholds()) == []


def test_a_final_evaluation_soon_after_the_last_periodic_one_still_shows_the_gap():
    """gjurdzinski/Open-Assistant's reward model: evals 0.547, 0.510, 0.363 (best), 0.575, 0.771 at steps 0, 50, 100,
    150 and a final one at 175, with only two training points (160, 170) after the eval at 150: the training loss's
    last three points after the best stand for the end."""
    from forensics.analyzers.overfitting import detect_overfitting
    train = [0.4815, 0.3131, 0.2958, 0.2475, 0.1941, 0.1775, 0.1793, 0.2513, 0.2078, 0.1141, 0.1665, 0.1217, 0.2322,
             0.1437, 0.1615, 0.0965, 0.1168]
    metrics = {"loss": pd.Series(train, index=range(10, 171, 10), dtype="float64"),
               "eval_loss": pd.Series([0.5467, 0.5101, 0.3625, 0.5746, 0.7710], index=[0, 50, 100, 150, 175])}
    (found,) = detect_overfitting(metrics, Thresholds())
    assert (found.kind, found.step) == ("overfitting", 150)
    held = {**metrics, "loss": pd.Series([0.48, 0.31, 0.30, 0.25, 0.19] + [0.18] * 12, index=range(10, 171, 10))}
    assert detect_overfitting(held, Thresholds()) == []  # the training loss stopped falling too: no gap opening


def _evals_after_a_best(evals: list[float], train_levels: list[float], wobble: float = 0.01) -> dict:
    """Evaluations every 200 steps from 200, the training loss logged every 10 steps at `train_levels[i]` (with a
    small wobble) over the interval that ends at eval i."""
    eval_steps = [200 * (i + 1) for i in range(len(evals))]
    train = {}
    for i, level in enumerate(train_levels):
        for s in range(200 * i + 10, 200 * (i + 1) + 1, 10):
            train[s] = level * (1 + wobble if s % 20 else 1 - wobble)
    return {"loss": pd.Series(train, dtype="float64"), "eval_loss": pd.Series(evals, index=eval_steps, dtype="float64")}


def test_three_evals_climbing_after_the_best_while_the_training_loss_falls_is_overfitting():
    """zjzheng0410's Qwen2.5-7B QLoRA (LLaMA-Factory, 4 epochs): eval 1.7255 at its best, then 1.7275, 1.7348, 1.7610
    (+2.1%) while the training loss fell from 1.83 to 1.73."""
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.95, 1.7255, 1.7275, 1.7348, 1.7610], [2.1, 1.83, 1.80, 1.76, 1.726])
    (found,) = detect_overfitting(metrics, Thresholds())
    assert (found.kind, found.step) == ("overfitting", 600) and "keeps falling" in found.message


def test_three_evals_climbing_while_the_training_loss_holds_level_is_not_this_rule():
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.95, 1.7255, 1.7275, 1.7348, 1.7610], [2.1, 1.83, 1.83, 1.835, 1.83])
    assert detect_overfitting(metrics, Thresholds()) == []


def test_an_overfitting_message_does_not_say_the_training_loss_fell_where_it_held_level():
    """matt7salomon's Mistral-7B LoRA: the eval loss rose while the training loss held at about 1.34; the message said
    'while the training loss keeps falling'."""
    from forensics.analyzers.overfitting import detect_overfitting
    metrics = _evals_after_a_best([1.9, 1.5, 1.75, 1.95, 2.1, 2.3], [2.0, 1.34, 1.338, 1.338, 1.338, 1.338], wobble=0)
    (found,) = detect_overfitting(metrics, Thresholds())
    assert "keeps falling" not in found.message and "did not improve either" in found.message
