"""A fine-tune of a trained model judged on the level its loss sits at, not only on its fall (fx-levels).

LonelyGuy-SE1_QLoRA-Test: a QLoRA of the pretrained Qwen2.5-1.5B on schema / question / SQL text, its loss about 5.1
over its first tenth and 4.88 over its last (-4.5%) after two epochs: a trained model reads such text near 1 nat, so a
few-percent fall at 5 nats is no evidence the run learned its task (the labels most likely hold the padding).
hoa-10_RLHF: an ORPO QLoRA whose notebook's pip output says transformers 4.51.3, a release that logs the loss as a
mean over the accumulation steps: its start at 90% of ln V is not divided by 4 as a possible 4.46-4.47 sum.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from forensics import analyze
from forensics.analyzers.fine_tune_level import detect_fine_tune_far_above_text
from forensics.causes.logged_loss import summed_loss_factor
from forensics.config import RunConfig, Thresholds
from forensics.ingest.console_warnings import console_warnings


def _loss(start: float, end: float, n: int = 129, noise: float = 0.45, seed: int = 0) -> pd.Series:
    """A logged loss going linearly from `start` to `end` over `n` points every 10 steps, with Gaussian noise."""
    rng = np.random.default_rng(seed)
    values = np.linspace(start, end, n) + rng.normal(0.0, noise, n)
    return pd.Series(values, index=range(10, 10 * n + 1, 10), dtype="float64")


def _found(loss: pd.Series, trained: bool = True, eval_loss: pd.Series | None = None) -> list:
    metrics = {"loss": loss} if eval_loss is None else {"loss": loss, "eval_loss": eval_loss}
    return detect_fine_tune_far_above_text(metrics, Thresholds(), trained, None)


def test_a_trained_models_fine_tune_that_stays_at_5_nats_shows_no_learning():
    found = _found(_loss(5.12, 4.85))
    assert [(f.kind, f.severity, f.step) for f in found] == [("no_learning_evidence", "warning", 10)]
    assert found[0].evidence["last_tenth_loss"] > 4.6
    assert "nats" in found[0].message and "eval" in found[0].message


def test_the_same_small_fall_at_a_trained_models_level_is_left_alone():
    assert _found(_loss(2.12, 2.02, noise=0.1)) == []


def test_a_fine_tune_that_falls_far_from_a_high_start_is_left_alone():
    # (a fall of a fifth and more: the model is learning something, judged by the start rules, not this one)
    assert _found(_loss(5.9, 4.7)) == []


def test_a_loss_that_rose_is_left_to_the_divergence_rules():
    # (keanuspies_lyric-generator-llm: a bloom-3b LoRA from about 10.3 to 16.2, judged broken at its divergence)
    assert _found(_loss(10.3, 16.2)) == []


def test_a_model_from_random_weights_is_not_held_to_a_trained_models_level():
    assert _found(_loss(5.12, 4.85), trained=False) == []


def test_a_held_out_loss_at_a_trained_models_level_is_evidence_enough():
    evals = pd.Series([2.4, 2.3, 2.2], index=[400, 800, 1200], dtype="float64")
    assert _found(_loss(5.12, 4.85), eval_loss=evals) == []


def test_pips_installed_transformers_dates_the_release():
    text = ("Requirement already satisfied: transformers in /usr/local/lib/python3.11/dist-packages (4.51.3)\n"
            "Requirement already satisfied: trl in /usr/local/lib/python3.11/dist-packages (0.17.0)\n")
    facts = console_warnings(text)
    assert facts["console_transformers_at_least"] == "4.51"
    assert "4.51.3" in facts["console_transformers_at_least_line"]


def test_pips_dependency_line_and_fresh_install_date_the_release_by_the_oldest():
    text = ("Requirement already satisfied: transformers>=4.46.0 in /usr/lib/python3.11/site-packages (from trl) "
            "(4.52.4)\nSuccessfully installed tokenizers-0.20.3 transformers-4.46.3\n")
    assert console_warnings(text)["console_transformers_at_least"] == "4.46"


def test_unsloths_banner_dates_the_release():
    text = "==((====))==  Unsloth 2026.4.8: Fast Qwen2 patching. Transformers: 5.5.0.\n"
    assert console_warnings(text)["console_transformers_at_least"] == "5.5"


def test_another_package_named_like_transformers_dates_nothing():
    text = ("Requirement already satisfied: transformers_stream_generator in /opt/conda/site-packages (0.0.4)\n"
            "Requirement already satisfied: sentence-transformers in /opt/conda/site-packages (2.2.2)\n"
            "Successfully installed sentence-transformers-2.2.2 tokenizers-0.13.3\n")
    assert "console_transformers_at_least" not in console_warnings(text)


def _accumulating(at_least: str) -> RunConfig:
    config = RunConfig()
    config.add("gradient_accumulation_steps", 4, "Orpo.ipynb")
    config.add("transformers_at_least", at_least, "Orpo.ipynb: pip")
    return config


def test_a_release_pip_dates_after_the_summing_ones_is_not_divided():
    assert summed_loss_factor(_accumulating("4.51"), release_unknown_counts=True) == 1


def test_a_summing_release_pip_names_keeps_the_benefit_of_the_doubt():
    assert summed_loss_factor(_accumulating("4.46"), release_unknown_counts=True) == 4


def test_the_corpus_fine_tunes_highest_healthy_ends_stay_healthy():
    # (the highest ends of trained models' fine-tunes judged healthy: xuyubiao's P-tuning of ChatGLM-6B, 5.59 -> 4.45,
    # and rokibol's Qwen2.5-0.5B LoRA, 4.65 -> about 4.2 in 10 steps: under the level, or fallen by a tenth and more)
    for case in ("xuyubiao_ADBlock-Rules", "rokibol_py-blog"):
        analysis = analyze(Path(__file__).parent / "realworld" / case, check_checkpoints=False)
        assert (case, analysis.status) == (case, "healthy")
