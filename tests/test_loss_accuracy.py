"""A loss that falls several-fold while the token accuracy beside it stays put (loss_accuracy_mismatch).

Must fire: fyh2001/megatron-sft-recipes' Liger-kernel benchmark (tests/realworld, judged a warning): loss 6.64 ->
1.90 over 30 steps while token_acc stays at 0.56-0.67. Must stay silent: the same repository's full run (loss
2.03 -> 1.15, token_acc 0.60 -> 0.69, judged healthy), a run whose accuracy climbs with its falling loss, and
logs without an accuracy.
"""
from __future__ import annotations

import pandas as pd
import pytest

from forensics.analyzers.loss_accuracy import detect_loss_accuracy_mismatch
from forensics.config import Thresholds

LIGER_LOSS = [6.641, 4.484, 5.32, 5.242, 5.17, 3.848, 2.908, 2.922, 2.996, 2.697, 2.727, 2.943, 2.638, 2.309, 2.215,
              3.038, 2.688, 2.501, 2.1, 2.408, 2.382, 2.115, 2.419, 2.141, 2.281, 2.205, 2.314, 2.051, 1.889, 1.904]
LIGER_ACC = [0.56, 0.654, 0.599, 0.616, 0.586, 0.635, 0.654, 0.679, 0.604, 0.671, 0.612, 0.592, 0.632, 0.666, 0.64,
             0.55, 0.58, 0.63, 0.67, 0.612, 0.64, 0.642, 0.585, 0.633, 0.64, 0.65, 0.6, 0.648, 0.643, 0.657]


def _metrics(loss, accuracy, name="token_acc") -> dict:
    steps = range(1, len(loss) + 1)
    out = {"loss": pd.Series(dict(zip(steps, loss)), dtype="float64")}
    if accuracy is not None:
        out[name] = pd.Series(dict(zip(steps, accuracy)), dtype="float64")
    return out


def test_a_loss_falling_two_and_a_half_fold_with_a_flat_token_accuracy_is_a_warning():
    found = detect_loss_accuracy_mismatch(_metrics(LIGER_LOSS, LIGER_ACC), Thresholds())
    assert [(f.kind, f.severity, f.step) for f in found] == [("loss_accuracy_mismatch", "warning", 1)]
    assert found[0].evidence["accuracy_metric"] == "token_acc" and found[0].evidence["loss_fall"] > 2


@pytest.mark.parametrize("loss, accuracy, name", [
    ([2.03 - 0.003 * s for s in range(294)], [0.60 + 0.0003 * s for s in range(294)], "token_acc"),  # 1.8-fold
    ([1.26 * 0.8 ** s for s in range(16)], [min(0.977, 0.75 + 0.03 * s) for s in range(16)], "mean_token_accuracy"),
    (LIGER_LOSS, None, "token_acc"),  # no accuracy logged
])
def test_a_loss_that_falls_with_its_accuracy_or_alone_raises_nothing(loss, accuracy, name):
    assert detect_loss_accuracy_mismatch(_metrics(loss, accuracy, name), Thresholds()) == []
