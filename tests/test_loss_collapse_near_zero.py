"""A loss near 0 (forensics/analyzers/collapse.py): unexplained from its first point, memorization after a descent.

From batch AS64 (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations


import numpy as np
import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds


TH = Thresholds()


def _epochs(loss: list[float]) -> dict[str, pd.Series]:
    steps = np.arange(1, len(loss) + 1)
    return {"loss": pd.Series(loss, index=steps, dtype="float64"),
            "epoch": pd.Series(steps.astype("float64"), index=steps)}


def test_a_loss_near_zero_from_its_first_point_is_unexplained_not_memorization():
    """goldensam777_BissiMamba: epoch means of 3e-6 from the first epoch: no descent is logged."""
    (found,) = detect_loss_collapse(_epochs([3e-6] * 7 + [2e-6] * 3), TH)
    assert (found.kind, found.step) == ("zero_loss_unexplained", 1)
    assert "no descent" in found.message


def test_a_loss_near_zero_from_its_first_point_under_a_higher_held_out_loss_is_no_leak():
    """hyeonggeonkim-berkeley: the fifth training of one model, train 0.0009 from its first epoch, validation 0.034:
    the training set learned, not a target given away (which the held-out text would get too)."""
    metrics = _epochs([9e-4, 4e-4] + [9e-4] * 10)
    metrics["eval_loss"] = pd.Series(np.linspace(0.0343, 0.036, 12), index=metrics["loss"].index)
    assert "zero_loss_unexplained" not in [f.kind for f in detect_loss_collapse(metrics, TH)]


def test_a_gradual_descent_to_near_zero_over_epochs_is_still_memorization():
    loss = list(np.geomspace(2.5, 2e-4, 12)) + [1.5e-4] * 8
    found = detect_loss_collapse(_epochs(loss), TH)
    assert [f.kind for f in found] == ["memorization"]
