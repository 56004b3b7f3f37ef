"""A first loss above the uniform guess that the tool missed (fx-startabove): a run's only loss, far beyond any
vocabulary's guess, and an adapter's start that was divided by the accumulation steps though the console's own
transformers message dates its release after the ones that logged a sum.

2b3o4o_transformer-implementation: one SGD step of a notebook Transformer logged 961.1, its vocabulary not printed.
BDH-teacher_Deep_Learning_Audit_code: a bloom-560m LoRA, 4 accumulation steps, first window 18.39 (ln 250880 = 12.43),
its notebook printing transformers 4.56's "`torch_dtype` is deprecated! Use `dtype` instead!".
"""
from __future__ import annotations

import math

import pandas as pd

from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.causes.logged_loss import summed_loss_factor
from forensics.config import RunConfig, Thresholds
from forensics.ingest.console_facts import console_facts
from forensics.ingest.console_warnings import console_warnings
from forensics.ingest.vocabulary import derive_vocab_size

_DEPRECATION = "`torch_dtype` is deprecated! Use `dtype` instead!\n"


def _start(losses: list[float], method: str = "full") -> list:
    metrics = {"loss": pd.Series(losses, index=range(len(losses)), dtype="float64")}
    return detect_start_above_uniform_guess(metrics, Thresholds(), method, None)


def test_the_only_loss_a_run_logged_far_beyond_any_guess_is_its_start():
    found = _start([961.1148])
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 0)]
    assert found[0].evidence["first_loss"] == 961.1148


def test_a_lone_loss_under_three_times_any_guess_is_left_alone():
    assert _start([3.0 * math.log(440_000) - 0.5]) == []


def test_one_real_loss_among_nan_windows_is_left_alone():
    # (lf-sft-graduate-agent: one real loss among a log of NaN windows says nothing of the model's start)
    assert _start([122.0, float("nan"), float("nan")]) == []


def test_the_torch_dtype_deprecation_dates_the_release_at_4_56():
    facts = console_warnings("loading weights\n" + _DEPRECATION + "{'loss': 18.3943, 'epoch': 0.1}\n")
    assert facts["console_transformers_at_least"] == "4.56"
    assert "torch_dtype" in facts["console_transformers_at_least_line"]


def test_a_console_without_a_dating_message_says_no_release():
    assert "console_transformers_at_least" not in console_warnings("{'loss': 2.1, 'epoch': 0.1}\n")


def _accumulating(at_least: str | None) -> RunConfig:
    config = RunConfig()
    config.add("gradient_accumulation_steps", 4, "LoRA.ipynb")
    if at_least:
        config.add("transformers_at_least", at_least, "LoRA.ipynb: " + _DEPRECATION.strip())
    return config


def test_a_release_dated_after_the_summing_ones_is_not_divided():
    assert summed_loss_factor(_accumulating("4.56"), release_unknown_counts=True) == 1


def test_a_release_not_dated_still_gets_the_benefit_of_the_doubt():
    assert summed_loss_factor(_accumulating(None), release_unknown_counts=True) == 4


def test_a_bloom_base_names_its_vocabulary():
    config = RunConfig()
    config.add("model.name_or_path", "bigscience/bloom-560m", "LoRA.ipynb")
    derive_vocab_size(config)
    assert config.get("model.vocab_size") == 250880


def test_a_vocabulary_printed_with_a_thousands_separator_is_read_whole():
    # (jonhenshaw_nanochat's tokenizer report: `vocab_size: 65,536`, read as 65 before, ln 65 = 4.17 for 11.09)
    assert console_facts("vocab_size: 65,536\nnum_layers: 20\n")["console_vocab_size"] == 65536
    assert console_facts("  Vocab Size: 65\n")["console_vocab_size"] == 65


def test_a_lone_loss_of_a_run_whose_method_is_not_known_is_left_alone():
    assert _start([961.1148], method="unknown") == []
