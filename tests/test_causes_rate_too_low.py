"""Tests of causes/too_slow: a rate far under its kind's recipes.

A run that never learned at a learning rate far under its kind's recipes is told the rate (causes.too_slow)."""
from __future__ import annotations

from forensics.causes import infer_causes
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile

from tests.test_causes import by_id, config, timeline


STEPS = range(10, 190, 10)
FLAT_DPO = {s: 0.6931 for s in STEPS}


def _never_learned() -> Finding:
    return Finding(kind="never_learned", severity="error", step=10, message="loss at ln 2", metric="loss")


def _causes(rate: float, method="lora", objective="preference", grad=0.05, finding=None):
    tl = timeline(learning_rate={s: rate for s in STEPS}, loss=FLAT_DPO, grad_norm={s: grad for s in STEPS})
    profile = RunProfile(method=method, objective=objective, model_params=1_500_000_000)
    return by_id(infer_causes(config(learning_rate=rate), tl, [finding or _never_learned()], [], Thresholds(),
                              profile=profile))


def test_a_lora_dpo_at_a_tenth_of_the_recipes_never_learning_is_told_its_rate_is_likely_too_low():
    cause = _causes(5e-7)["lr_too_low"]
    assert cause.confidence == "likely" and "5e-06 to 5e-05" in cause.suggestion, (cause.confidence, cause.suggestion)


def test_a_lora_dpo_at_the_recipes_rate_gets_no_too_low_cause():
    assert "lr_too_low" not in _causes(5e-6)


def test_a_full_dpo_at_its_own_recipes_rate_is_not_called_too_low_by_the_adapter_range():
    assert "lr_too_low" not in _causes(5e-7, method="full")


def test_an_unknown_method_is_judged_against_full_fine_tunings_lower_range():
    assert "lr_too_low" not in _causes(5e-7, method="unknown")
    cause = _causes(5e-8, method="unknown")["lr_too_low"]
    assert cause.confidence == "possible" and "method is unknown" in cause.suggestion


def test_an_unknown_objective_gets_no_too_low_cause():
    assert "lr_too_low" not in _causes(5e-7, objective="unknown")


def test_no_gradient_at_all_is_not_blamed_on_the_rate():
    assert "lr_too_low" not in _causes(5e-7, grad=0.0)


def test_a_run_with_no_learning_finding_gets_no_too_low_cause():
    spike = Finding(kind="loss_spike", severity="warning", step=50, message="spike", metric="loss")
    assert "lr_too_low" not in _causes(5e-7, finding=spike)


def test_a_warning_that_the_run_shows_no_learning_leaves_the_rate_possible():
    stalled = Finding(kind="no_learning_evidence", severity="warning", step=10, message="flat", metric="loss")
    assert _causes(1e-6, method="qlora", objective="sft", finding=stalled)["lr_too_low"].confidence == "possible"


def test_a_classifier_too_slow_is_told_to_check_its_labels_not_tokens():
    """A classification head's loss is over its labels: the language model's "the right tokens" is out of its terms."""
    cause = _causes(1e-7, method="full", objective="classification")["lr_too_low"]
    assert "the right labels" in cause.suggestion and "tokens" not in cause.suggestion, cause.suggestion


def test_a_language_model_too_slow_is_still_told_to_check_its_tokens():
    assert "the right tokens" in _causes(5e-7)["lr_too_low"].suggestion
