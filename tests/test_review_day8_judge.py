"""Session 8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md).

* A loss flat on ln 2 with an eval loss flat there too is a two-way guess even without an accuracy
  (TsinghuaAI/CPM-2-Finetune issue 11: train 0.699 -> 0.695, eval 0.702 -> 0.714 over 100 iterations).
"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from forensics.analyzers.never_learned import detect_never_learned
from forensics.config import Thresholds

LN2 = math.log(2)


def _flat_at(level: float, eval_losses: list[float] | None) -> dict:
    steps = range(1360, 1460, 10)
    wobble = [0.006, -0.004, 0.005, 0.002, 0.008, -0.006, 0.001, 0.004, -0.002, 0.003]
    metrics = {"loss": pd.Series([level + w for w in wobble], index=list(steps), dtype="float64")}
    if eval_losses is not None:
        metrics["eval_loss"] = pd.Series(eval_losses, index=[1400, 1450][:len(eval_losses)], dtype="float64")
    return metrics


def test_a_loss_and_an_eval_loss_both_flat_on_ln_2_never_learned():
    (found,) = detect_never_learned(_flat_at(LN2, [0.7021, 0.7143]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 1360)
    assert "eval loss stays there too" in found.message


@pytest.mark.parametrize("eval_losses", [
    None,  # the training loss alone: a converged language model can sit at 0.69
    [0.7021],  # one evaluation says nothing about a level
    [0.93, 0.95],  # the held-out loss is elsewhere: not a two-way guess
    [0.72, 0.69],  # the held-out loss fell: something was learned
])
def test_a_loss_near_ln_2_without_a_held_out_loss_flat_there_is_not_never_learned(eval_losses):
    assert detect_never_learned(_flat_at(LN2, eval_losses), Thresholds()) == []
