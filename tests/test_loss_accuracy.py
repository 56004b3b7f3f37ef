"""A loss that falls several-fold while the token accuracy beside it stays put (loss_accuracy_mismatch).

Must fire: a loss under (1 - token accuracy) x ln 2 (sogmgm); fyh2001/megatron-sft-recipes' Liger-kernel benchmark (tests/realworld, judged a warning): loss 6.64 ->
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


# LEEDONGQUE/serverlog (judged healthy): the accuracy near its ceiling, a third fewer tokens ranked wrong
SERVERLOG_LOSS = [1.0507, 0.3047, 0.2397, 0.2228, 0.2072, 0.2037, 0.1566, 0.1201, 0.1189, 0.1173, 0.1023, 0.0859,
                  0.086, 0.1143, 0.104, 0.0809, 0.0835, 0.0983, 0.0896, 0.1001, 0.086, 0.0961, 0.1053, 0.0857, 0.0828,
                  0.0842, 0.0861, 0.0817, 0.08, 0.0718, 0.079, 0.0747, 0.0857, 0.0781, 0.0754, 0.0777, 0.0919, 0.0886,
                  0.0893, 0.0818]
SERVERLOG_ACC = [0.7892, 0.9333, 0.9481, 0.952, 0.9482, 0.9458, 0.9589, 0.9646, 0.9641, 0.9615, 0.9635, 0.9674, 0.9647,
                 0.9607, 0.9621, 0.964, 0.9662, 0.9648, 0.9654, 0.9643, 0.965, 0.9649, 0.9618, 0.9648, 0.966, 0.9665,
                 0.9638, 0.9682, 0.9645, 0.968, 0.9666, 0.969, 0.9648, 0.9677, 0.968, 0.9661, 0.9646, 0.9637, 0.9646,
                 0.9649]
# sogmgm/llm_finetune (judged a warning from its second point): loss 0.06-0.1 beside a token accuracy of 0.37-0.54
SOGMGM_LOSS = [0.5588, 0.1083, 0.0963, 0.0766, 0.0757, 0.0826, 0.099, 0.0597, 0.1645, 0.0688, 0.0606, 0.1333, 0.0769,
               0.062, 0.0655, 0.0537]
SOGMGM_ACC = [0.4874, 0.4407, 0.4798, 0.5305, 0.3731, 0.4719, 0.4222, 0.4838, 0.4907, 0.5409, 0.5327, 0.3738, 0.5021,
              0.5391, 0.4433, 0.5236]


def test_a_loss_falling_beside_an_accuracy_near_its_ceiling_agrees_with_it():
    assert detect_loss_accuracy_mismatch(_metrics(SERVERLOG_LOSS, SERVERLOG_ACC, "mean_token_accuracy"),
                                         Thresholds()) == []


def test_a_loss_under_what_its_own_token_accuracy_allows_is_a_warning_from_where_it_goes_under():
    found = detect_loss_accuracy_mismatch(_metrics(SOGMGM_LOSS, SOGMGM_ACC, "mean_token_accuracy"), Thresholds())
    assert [(f.kind, f.severity, f.step) for f in found] == [("loss_accuracy_mismatch", "warning", 2)]
    assert found[0].evidence["under_accuracy_bound"] and found[0].evidence["points_under"] == 15
    # the same accuracies with a loss at or above (1 - accuracy) x ln 2: nothing to say
    honest = [max(loss, 0.75 * (1 - acc)) for loss, acc in zip(SOGMGM_LOSS, SOGMGM_ACC)]
    assert detect_loss_accuracy_mismatch(_metrics(honest, SOGMGM_ACC, "mean_token_accuracy"), Thresholds()) == []
    # an accuracy that is not over the loss's own tokens (a classifier's "acc") bounds nothing
    assert detect_loss_accuracy_mismatch(_metrics(SOGMGM_LOSS, SOGMGM_ACC, "acc"), Thresholds()) == []
