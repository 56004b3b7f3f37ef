"""Tests of the memorization rule: a log that begins late, an easy task's held-out loss.

From the session-8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


def _late_log(losses: list[float], first_epoch: float, per_point: float = 0.025) -> dict:
    steps = list(range(1, len(losses) + 1))
    return {"loss": pd.Series(losses, index=steps, dtype="float64"),
            "epoch": pd.Series([first_epoch + per_point * i for i in range(len(losses))], index=steps)}


def test_a_log_that_begins_many_epochs_in_at_a_memorized_loss_is_memorization():
    """hiyouga/LlamaFactory issue 569: seven lines at epochs 14.71-14.86, loss 0.0178-0.022, no eval loss."""
    from forensics.analyzers.collapse import detect_loss_collapse
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    metrics = _late_log([0.0199, 0.0184, 0.0196, 0.0185, 0.0178, 0.022, 0.0201], 14.71)
    (found,) = detect_loss_collapse(metrics, Thresholds())
    assert (found.kind, found.severity, found.step) == ("memorization", "warning", 1)
    assert "begins at epoch 14.7" in found.message
    assert detect_no_learning_evidence(metrics, Thresholds()) == []  # a loss that low learned its data


@pytest.mark.parametrize("metrics", [
    # Time-MoE's forecasting loss at epochs 24-34: 0.066 falling steadily, not a memorized cross-entropy
    _late_log([0.0656, 0.0643, 0.0633, 0.0623, 0.0614, 0.0605, 0.0596, 0.0588, 0.0580, 0.0572, 0.0564], 24.0, 1.0),
    # 0.02 in the first epoch: no example seen twice, the data is simply that easy
    _late_log([0.0199, 0.0184, 0.0196, 0.0185, 0.0178, 0.022, 0.0201], 0.3),
])
def test_a_low_loss_early_or_above_the_memorized_level_is_not_memorization_before_the_log(metrics):
    from forensics.analyzers.collapse import detect_loss_collapse
    assert detect_loss_collapse(metrics, Thresholds()) == []


def _easy_task(eval_losses: list[float]) -> dict:
    """A descent from 2.0 to about 1e-5 over 400 steps (logged every 10) with grad_norm finite, and evaluations every
    100 steps from step 100."""
    steps = list(range(10, 401, 10))
    loss = [max(2.0 * 0.6 ** (s / 10 - 1), 1e-5) for s in steps]
    return {"loss": pd.Series(loss, index=steps, dtype="float64"),
            "grad_norm": pd.Series([0.5] * len(steps), index=steps, dtype="float64"),
            "eval_loss": pd.Series(eval_losses, index=[100, 200, 300, 400], dtype="float64")}


def test_a_training_loss_near_zero_with_the_held_out_loss_there_first_is_no_memorization():
    """Seanaaa0/GPT-CoT (a synthetic grid task, phi-2 4-bit LoRA): train and eval loss both reach ~1e-5, the eval loss
    3.4e-4 at the evaluation before the training loss got there: the task is that easy, not learned by heart."""
    from forensics.analyzers.collapse import detect_loss_collapse
    assert [f.kind for f in detect_loss_collapse(_easy_task([3.4e-4, 6e-5, 2e-5, 1.2e-5]), Thresholds())] == []


def test_a_training_loss_near_zero_while_the_held_out_loss_stays_up_is_still_memorization():
    from forensics.analyzers.collapse import detect_loss_collapse
    assert [f.kind for f in detect_loss_collapse(_easy_task([0.9, 1.1, 1.3, 1.5]), Thresholds())] == ["memorization"]
