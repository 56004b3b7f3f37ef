"""The third pass of the advice audit (fx-advice3): advice that fits the run the files show. A rate that never stopped
rising is no warm-up to keep, and a rate past every recipe of a run whose method and objective are unknown is not given
a 7B-class fine-tuning range as its target. Each test names the real run that showed it; a second test keeps the advice
where it was right."""
from __future__ import annotations

import pytest

import forensics
from forensics.findings import Finding
from tests.test_causes import by_id, config, timeline
from tests.test_fxadvice_audit import CORPUS, _causes


def _diverging(lr: dict[int, float], at: int = 120, **profile):
    """The lr_too_high cause of a run whose loss falls to step `at`, then rises, at the logged rates `lr`."""
    loss = {s: 7.6 - 0.02 * s if s < at else 7.6 - 0.02 * at + 0.1 * (s - at) for s in lr}
    found = [Finding("divergence", "error", at, "loss diverges", metric="loss")]
    return _causes(config(), timeline(learning_rate=lr, loss=loss), found, **profile)["lr_too_high"]


# ---- a rate that rose until the log stopped is no warm-up ---------------------------------------------------------


def test_a_rate_rising_to_the_log_s_end_is_named_as_the_schedule_not_kept_as_a_warm_up():
    """ChristianPE1_transformer-test: a plateau scheduler multiplied the rate by 1.05 every epoch, 0.015 to 1.546 where
    the loss diverged (epoch 117) and 2e8 at epoch 500; it was told to "keep the warm-up"."""
    cause = _diverging({s: 1e-4 * 1.05 ** s for s in range(1, 301)}, objective="sft", method="full")
    assert cause.suggestion.startswith("Fix the learning-rate schedule first: the logged rate never stopped rising"), \
        cause.suggestion
    assert "keep the warm-up" not in cause.suggestion and "warm up over" not in cause.suggestion, cause.suggestion


def test_a_warm_up_that_reached_its_peak_and_held_is_still_kept():
    cause = _diverging({s: 1e-3 * min(1.0, s / 20) for s in range(1, 301)}, objective="sft", method="full")
    assert "keep the warm-up" in cause.suggestion and "never stopped rising" not in cause.suggestion, cause.suggestion


# ---- a rate past every recipe, method and objective unknown: no 7B-class target -----------------------------------


def test_a_rate_past_every_recipe_of_an_unknown_run_is_not_given_a_7b_fine_tuning_target():
    """ChristianPE1_transformer-test (a small transformer trained from a first loss of 7.6, method and objective not in
    its file) at 1.5 was told "lower the learning rate (1e-05 to 2e-05 for full fine-tuning, 0.0001 to 0.0002 for
    LoRA/QLoRA ...) ... for a 7B-class model"."""
    cause = _diverging({s: 0.05 for s in range(1, 301)})
    assert "Lower the learning rate: 0.05 is above every Adam-family recipe" in cause.suggestion, cause.suggestion
    assert "7B-class" not in cause.suggestion and "for full fine-tuning" not in cause.suggestion, cause.suggestion


@pytest.mark.parametrize("objective", ["sft", "unknown"])
def test_a_known_objective_or_a_rate_within_pre_training_s_reach_keeps_its_advice(objective):
    peak = 0.05 if objective == "sft" else 5e-3
    cause = _diverging({s: peak for s in range(1, 301)}, objective=objective)
    assert "above every Adam-family recipe" not in cause.suggestion, cause.suggestion
    expected = "Lower the learning rate (1e-05 to 2e-05 for full fine-tuning" if objective == "sft" else \
        "No range in the table fits a rate of 0.005"
    assert cause.suggestion.startswith(expected), cause.suggestion


def test_christianpe1_is_told_to_fix_its_schedule():
    case = CORPUS / "ChristianPE1_transformer-test"
    if not case.exists():
        pytest.skip("corpus case not present")
    advice = by_id(forensics.analyze(case).causes)["lr_too_high"].suggestion
    assert advice.startswith("Fix the learning-rate schedule first") and "7B-class" not in advice, advice
    assert "keep the warm-up" not in advice, advice


# ---- pre-training from random weights has no adapter range --------------------------------------------------------


def test_a_pre_training_run_of_unknown_method_is_not_given_an_adapter_range():
    """liguodongiot_llm-action, a Megatron pre-training of a LLaMA from ln(32000), method not in its lines: its rate
    "is not above the usual 0.00012 to 0.0003 for pre-training, 0.0001 to 0.0002 for LoRA/QLoRA adapters; the method
    is unknown" - an adapter's range for a run with no trained model to adapt."""
    cause = _diverging({s: 5e-3 for s in range(1, 301)}, objective="pretrain")
    assert "LoRA" not in cause.suggestion and "method is unknown" not in cause.suggestion, cause.suggestion
    assert "0.00012 to 0.0003 for pre-training" in cause.suggestion, cause.suggestion
    assert any("pre-training from random weights trains every weight" in e for e in cause.evidence), cause.evidence


def test_a_fine_tuning_run_of_unknown_method_still_gets_both_ranges():
    cause = _diverging({s: 5e-3 for s in range(1, 301)}, objective="sft")
    assert "1e-05 to 2e-05 for full fine-tuning, 0.0001 to 0.0002 for LoRA/QLoRA adapters" in cause.suggestion, \
        cause.suggestion
