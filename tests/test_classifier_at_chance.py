"""Tests of analyzers/classifier_at_chance.py.

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


# ---- a k-way classifier (its config's num_labels) at ln k with no eval accuracy logged ---------------------------------

from forensics.analyzers.classifier_at_chance import detect_classifier_at_chance  # noqa: E402


def _classifier(level: float, evals: list[float]) -> dict:
    wobble = [0.03, -0.01, 0.02, -0.03, 0.01, 0.0]
    steps = list(range(500, 500 * 138 + 1, 500))
    return {"loss": pd.Series([level + wobble[i % 6] for i in range(len(steps))], index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=[22853, 45706, 68559][:len(evals)], dtype="float64")}


def test_a_four_way_classifier_at_ln4_in_training_and_evaluation_never_learned():
    (found,) = detect_classifier_at_chance(_classifier(1.38, [1.3716, 1.3609, 1.3628]), Thresholds(), 4)
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 500)


@pytest.mark.parametrize("level, evals, labels", [
    (1.38, [1.3716, 1.1, 0.9], 4),  # the eval loss left ln 4: it learned
    (0.9, [0.91, 0.9, 0.88], 4),  # the loss is far under ln 4
    (1.38, [1.3716, 1.3609, 1.3628], None),  # no label count: nothing says what chance is
])
def test_a_classifier_that_learned_or_of_unknown_width_is_not_at_chance(level, evals, labels):
    assert detect_classifier_at_chance(_classifier(level, evals), Thresholds(), labels) == []


# ---- from the review of the day's rules: where they must stay silent ---------------------------------------------------


def test_a_classifier_whose_eval_accuracy_rises_is_not_called_at_chance_by_its_label_count():
    metrics = _classifier(1.38, [1.3716, 1.3609, 1.3628])
    metrics["eval_accuracy"] = pd.Series([0.318, 0.352, 0.377], index=[22853, 45706, 68559], dtype="float64")
    assert detect_classifier_at_chance(metrics, Thresholds(), 4) == []
