"""A first training loss above the uniform guess of any vocabulary, where the vocabulary is not known.

ln(440k) = 13 nats bounds the uniform guess of every tokenizer in use (Gemma 3's 262k: 12.48). A run that fine-tunes
a trained model (an SFT stage) has no fresh head's large initial logits to excuse a start above it: a MiniMind-style
SFT console (tests/realworld/MoonLight0123_llm) logs 15.43 at step 0 and 2.13 a hundred steps on. Such a start is a
warning whatever the method. So is a from-scratch run's first training loss above that bound beside an eval loss of
the same weights at the same step under it (tests/realworld/diegoalejogm_build-llm: 19.55 against 10.87 at step 0,
a train-loss helper summing 9 batches and dividing by 5). A run built from scratch (whose fresh head may start
somewhat above ln V), a start merely high but under the bound, and a loss summed over gradient accumulation by a
release known to sum it are not.
"""
from __future__ import annotations

import json

import pandas as pd

import forensics
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.config import Thresholds

# an SFT stage logged every 100 steps: a first point over any vocabulary's guess, then an ordinary fine-tune's level
SFT_ABOVE_ANY_GUESS = {0: 15.43, 100: 2.13, 200: 2.04, 300: 2.11, 400: 1.98, 500: 1.93, 600: 1.90, 700: 1.87,
                       800: 1.85, 900: 1.83, 1000: 1.80}


def _run(loss, **others):
    return {"loss": pd.Series(loss, dtype="float64"), **{k: pd.Series(v, dtype="float64") for k, v in others.items()}}


def _kinds(loss, method="unknown", vocab=None, from_scratch=False, fine_tune=True):
    return [f.kind for f in detect_start_above_uniform_guess(_run(loss), Thresholds(), method, vocab, None,
                                                             from_scratch, None, fine_tune)]


def test_a_fine_tunes_first_loss_above_the_largest_vocabularys_guess_is_a_warning():
    found = detect_start_above_uniform_guess(_run(SFT_ABOVE_ANY_GUESS), Thresholds(), "unknown", None, None, False,
                                             None, True)
    assert [(f.kind, f.severity, f.step) for f in found] == [("start_above_uniform_guess", "warning", 0)]
    assert "15.43" in found[0].message and "ln 440k" in found[0].message
    assert "no model fine-tuned from trained weights" in found[0].message


def test_a_full_fine_tune_naming_its_trained_base_is_held_to_the_same_bound():
    found = detect_start_above_uniform_guess(_run(SFT_ABOVE_ANY_GUESS), Thresholds(), "full", None, None, False,
                                             "Qwen/Qwen2.5-0.5B", fine_tune=True)
    assert [f.kind for f in found] == ["start_above_uniform_guess"]


def test_a_from_scratch_pretraining_start_near_its_own_vocabularys_guess_raises_nothing():
    """A fresh GPT-2-sized model (ln 50257 = 10.82) starts at about that guess and falls: pre-training, healthy."""
    fresh = {0: 10.98, 100: 7.9, 200: 6.6, 300: 5.9, 400: 5.4, 500: 5.1, 600: 4.9, 700: 4.7, 800: 4.6, 900: 4.5}
    assert _kinds(fresh, "full", None, from_scratch=True, fine_tune=False) == []
    assert _kinds(fresh, "full", 50257, from_scratch=True, fine_tune=False) == []


def test_a_from_scratch_start_somewhat_above_the_largest_guess_is_still_left_to_the_three_fold_bar():
    """A run not known to fine-tune a trained model may start a little above ln V with large initial logits."""
    assert _kinds(SFT_ABOVE_ANY_GUESS, "full", None, from_scratch=True, fine_tune=False) == []
    assert _kinds(SFT_ABOVE_ANY_GUESS, "unknown", None, fine_tune=False) == []


def test_a_start_up_point_high_but_under_the_bound_raises_nothing():
    """12.4 at step 0 is under ln 440k = 13: some vocabulary's guess could be above it."""
    high = {**SFT_ABOVE_ANY_GUESS, 0: 12.4}
    assert _kinds(high) == []


def test_a_realistic_sft_run_raises_nothing():
    ordinary = {0: 2.9, 100: 2.13, 200: 2.04, 300: 2.11, 400: 1.98, 500: 1.93, 600: 1.90, 700: 1.87, 800: 1.85}
    assert _kinds(ordinary) == []


def _summed_sft_run(folder, release: str):
    """A full SFT run folder whose logged loss is 8 x a per-step loss falling from 1.85 to 0.9 (14.8 to 7.2
    logged), with gradient_accumulation_steps 8 and the transformers release in config.json (no vocabulary stated)."""
    folder.mkdir(parents=True)
    history = [{"step": 10 * k, "loss": 8 * (1.9 - k / 20), "learning_rate": 2e-5} for k in range(1, 21)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 200, "log_history": history}))
    (folder / "args.json").write_text(json.dumps({"gradient_accumulation_steps": 8}))
    (folder / "config.json").write_text(json.dumps({"transformers_version": release}))
    return folder


def test_a_loss_summed_over_accumulation_by_a_release_known_to_sum_is_judged_per_step(tmp_path):
    run = forensics.analyze(_summed_sft_run(tmp_path / "qwen-sft", "4.46.0"))
    assert run.run_profile.objective == "sft"
    assert "start_above_uniform_guess" not in [f.kind for f in run.findings]


def test_the_same_loss_from_a_release_that_logs_the_mean_is_a_start_above_any_guess(tmp_path):
    run = forensics.analyze(_summed_sft_run(tmp_path / "qwen-sft", "4.51.3"))
    assert run.run_profile.objective == "sft"
    assert "start_above_uniform_guess" in [f.kind for f in run.findings]


# a fresh GPT-2-sized model (ln 50257 = 10.82) evaluated every 5 steps on train and held-out batches alike
FRESH_EVAL = {0: 10.87, 5: 10.10, 10: 9.28, 15: 8.62, 20: 8.00, 25: 7.48, 30: 7.12, 35: 6.9, 40: 6.8, 45: 6.7}


def _pretraining(train, eval_loss):
    return detect_start_above_uniform_guess(_run(train, eval_loss=eval_loss), Thresholds(), "full", None, None, True)


def test_a_from_scratch_training_loss_above_any_guess_beside_its_eval_under_it_is_a_warning():
    train = {s: 1.8 * v for s, v in FRESH_EVAL.items()}  # 19.57 at step 0, the same weights' eval 10.87
    found = _pretraining(train, FRESH_EVAL)
    assert [(f.kind, f.severity, f.step) for f in found] == [("start_above_uniform_guess", "warning", 0)]
    assert "the eval loss of the same weights at that step is 10.87" in found[0].message


def test_a_from_scratch_run_whose_training_and_eval_loss_start_together_raises_nothing():
    train = {s: v + 0.05 for s, v in FRESH_EVAL.items()}
    assert _pretraining(train, FRESH_EVAL) == []


def test_an_eval_first_logged_after_the_first_training_loss_says_nothing_of_its_weights():
    """A fresh head's large initial logits may put a first window over the bound: an eval logged only later is of
    other weights."""
    train = {s: 1.8 * v for s, v in FRESH_EVAL.items()}
    later = {s: v for s, v in FRESH_EVAL.items() if s > 0}
    assert _pretraining(train, later) == []


def _sft_run_of_a_release(folder, release: str, accumulation: int | None):
    """A full SFT run whose logged loss starts at 16.9 and ends at 8.8, the transformers release in config.json and
    gradient_accumulation_steps recorded or not."""
    folder.mkdir(parents=True)
    history = [{"step": 10 * k, "loss": 16.9 - 0.45 * k, "learning_rate": 2e-5} for k in range(0, 19)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 180, "log_history": history}))
    args = {"stage": "sft", "finetuning_type": "full"}
    if accumulation is not None:
        args["gradient_accumulation_steps"] = accumulation
    (folder / "training_args.yaml").write_text("".join(f"{k}: {v}\n" for k, v in args.items()))
    (folder / "config.json").write_text(json.dumps({"transformers_version": release}))
    return folder


def test_a_summing_release_with_no_accumulation_recorded_is_not_read_as_a_per_token_start(tmp_path):
    run = forensics.analyze(_sft_run_of_a_release(tmp_path / "qwen-sft", "4.46.0", None))
    assert run.run_profile.objective == "sft"
    assert "start_above_uniform_guess" not in [f.kind for f in run.findings]


def test_a_release_that_logs_the_mean_keeps_the_start_above_any_guess(tmp_path):
    run = forensics.analyze(_sft_run_of_a_release(tmp_path / "qwen-sft", "4.51.3", None))
    assert run.run_profile.objective == "sft"
    assert "start_above_uniform_guess" in [f.kind for f in run.findings]
