"""Tests of the model size (profile/) from names with underscores and scaled printed counts.

From the review of the day's changes 8776af3..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import pytest
from forensics.config import RunConfig
from forensics.ingest.stdout import console_facts
from forensics.timeline import Timeline


def _model_params(name):
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("model._name_or_path", name, "config.json")
    return run_profile(None, config, Timeline.empty(), []).model_params


# ---- profile._DECIMAL_UNDERSCORE --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, params", [("out/llama-3_70b_sft", 70_000_000_000),
                                          ("meta-llama/Llama-2_7b-hf", 7_000_000_000),
                                          ("outputs/llama-3_8b-lora", 8_000_000_000)])
def test_a_family_version_before_an_underscore_is_no_decimal_point(name, params):
    """Output folders named `llama-3_70b_sft`, `Llama-2_7b-hf`, `llama-3_8b-lora` (the family's version, then the
    size): `_DECIMAL_UNDERSCORE` reads `3_70b` as 3.70B (70B before), `2_7b` as 2.7B, `3_8b` as 3.8B. Fix belongs
    in forensics/profile.py:_DECIMAL_UNDERSCORE (a decimal only where the digit before the underscore is not a
    known family's version, `llama-`, `gemma-`, `qwen-`; or only for sizes Pythia/OPT/StableLM/Qwen-1_8B use)."""
    assert _model_params(name) == params


@pytest.mark.parametrize("name, params", [("Qwen/Qwen2_5-1_5B", 1_500_000_000), ("facebook/opt-1_3b", 1_300_000_000),
                                          ("EleutherAI/pythia-1_4b", 1_400_000_000), ("microsoft/phi-1_5", None),
                                          ("Qwen/Qwen-1_8B-Chat", 1_800_000_000)])
def test_underscore_decimal_sizes_that_hold(name, params):
    assert _model_params(name) == params


@pytest.mark.parametrize("name, params", [("outputs/qwen2_5_1_5b_lora", 1_500_000_000),
                                          ("saves/qwen2_5_0_5b_sft", 500_000_000),
                                          ("runs/Phi_1_5b_finetune", 1_500_000_000),
                                          ("out/Llama_3_1_8b", 8_000_000_000), ("out/qwen2_5_7b", 7_000_000_000)])
def test_names_with_underscores_for_every_separator_keep_a_half_size(name, params):
    """`qwen2_5_1_5b` and `Phi_1_5b` (underscores for dots and dashes alike) were read as 5B: `1_5b` after an
    underscore is 1.5B, while `3_1_8b` is still Llama 3.1 8B and `2_5_7b` Qwen2.5 7B."""
    assert _model_params(name) == params


@pytest.mark.parametrize("line, params", [("Total: 1.10B params, trainable: 4.19M params (0.38%)", 1_100_000_000),
                                          ("Trainable params: 4.2M params", None),
                                          ("LoRA: 4.19M params (0.5% of 1.1B)", None)])
def test_scaled_counts_that_name_a_part_are_no_model_size(line, params):
    assert console_facts(line + "\n").get("console_params_said") == params
