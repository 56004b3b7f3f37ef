"""A loss read against ln V where the run's own files give its vocabulary V (fx-vocablevel).

* A segment that logged no training loss and whose held-out loss, after a hundred logged iterations and more, sits
  within 1% of ln V: the model still guesses uniformly, it never learned (`stuck_at_guess.detect_eval_at_the_guess`).
  Vishal-Padia_llama-from-scratch: the last train() call's only point, 'validation loss: 4.158' after 100 'lr:' prints
  (ln 65 = 4.174, 'vocab size: 65' printed).
* A fine-tune of a trained model that logged no per-step loss and no eval, whose closing train_loss (the mean over
  the run) is above the uniform guess: the loss sat above chance over much of the run
  (`fine_tune_start.detect_start_above_uniform_guess`). REICHIYAN_llm_ft_tinyllama: a TinyLlama QLoRA's 3-step
  run, closing train_loss 13.697.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from forensics import analyze
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.analyzers.stuck_at_guess import detect_eval_at_the_guess
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.analyzers.redundant_doubts import without_doubt_after_never_learned


def _segment(eval_loss: float, lr_points: int = 100) -> dict:
    """A hand-written loop's segment as the notebook reader gives it: a learning rate at each logged iteration
    0 .. lr_points - 1, and the closing held-out loss at the last of them."""
    steps = range(lr_points)
    return {"learning_rate": pd.Series([1e-3] * lr_points, index=steps, dtype="float64"),
            "eval_loss": pd.Series([eval_loss], index=[lr_points - 1], dtype="float64")}


def test_a_held_out_loss_at_ln_v_after_a_hundred_iterations_never_learned():
    found = detect_eval_at_the_guess(_segment(4.158263540267944), 65)
    assert [(f.kind, f.severity, f.step) for f in found] == [("never_learned", "error", 0)]
    assert found[0].evidence["vocab_size"] == 65
    assert found[0].evidence["logged_iterations"] == 100
    assert "ln 65 = 4.174" in found[0].message


def test_a_held_out_loss_that_left_ln_v_stays_silent():
    # the same loop's healthy calls: 2.08 nats per character after 1000 iterations (frequencies alone give ~3.3)
    assert detect_eval_at_the_guess(_segment(2.0849), 65) == []
    assert detect_eval_at_the_guess(_segment(0.97 * math.log(65)), 65) == []


def test_a_held_out_loss_that_starts_at_ln_v_and_falls_stays_silent():
    # a model from random weights evaluated at its start (the uniform guess) and after learning
    metrics = _segment(2.5)
    metrics["eval_loss"] = pd.Series([4.17, 2.5], index=[0, 99], dtype="float64")
    assert detect_eval_at_the_guess(metrics, 65) == []


def test_a_held_out_loss_at_ln_v_after_a_few_iterations_is_too_early_to_tell():
    assert detect_eval_at_the_guess(_segment(4.17, lr_points=20), 65) == []


def test_without_a_known_vocabulary_or_beside_a_training_loss_the_eval_alone_is_not_read():
    assert detect_eval_at_the_guess(_segment(4.158), None) == []
    metrics = _segment(4.158)
    metrics["loss"] = pd.Series([4.17, 4.16], index=[0, 99], dtype="float64")
    assert detect_eval_at_the_guess(metrics, 65) == []


_CORPUS = Path(__file__).resolve().parent / "realworld"


def test_the_blog_loops_last_segment_at_ln_65_never_learned_and_a_learning_one_stays_silent():
    # the same 'Llama from scratch' loop: Vishal-Padia's last call (4.158 after 100 'lr:' prints, its optimizer over
    # another model's parameters) and DaraBodla's mini-GPT (16 held-out losses, the last 1.92, ln 65 = 4.174)
    stuck = analyze(_CORPUS / "Vishal-Padia_llama-from-scratch")
    assert (stuck.first_incident.kind, stuck.first_incident.step) == ("never_learned", 0)
    learned = analyze(_CORPUS / "DaraBodla_mini-gpt-pytorch")
    assert learned.config.get("model.vocab_size") == 65
    assert not [f for f in learned.findings if f.kind == "never_learned"]


def test_a_run_shown_never_to_have_learned_is_not_also_too_little_to_tell():
    # Vishal-Padia's "Then" line said "the eval loss alone (1 point) is too little to tell whether the run learned"
    # under the never_learned it is: the later doubt contradicts the finding and is dropped
    kinds = [f.kind for f in analyze(_CORPUS / "Vishal-Padia_llama-from-scratch").findings]
    assert "never_learned" in kinds and "no_learning_evidence" not in kinds


def test_a_doubt_dated_before_the_never_learned_finding_stays():
    doubt, never = Finding("no_learning_evidence", "warning", 0, "x"), Finding("never_learned", "error", 50, "y")
    late = Finding("no_learning_evidence", "warning", 60, "z")
    assert without_doubt_after_never_learned([doubt, never, late]) == [doubt, never]
    assert without_doubt_after_never_learned([doubt, late]) == [doubt, late]


def _closing_summary(train_loss: float, step: int = 3) -> dict:
    """The Trainer's closing summary alone: logging_steps longer than the run, no eval."""
    return {key: pd.Series([value], index=[step], dtype="float64") for key, value in
            (("train_runtime", 3.04), ("train_samples_per_second", 1.6), ("train_steps_per_second", 0.99),
             ("train_loss", train_loss), ("epoch", 1.0))}


def test_an_adapters_closing_mean_above_any_vocabularys_guess_is_a_start_above_it():
    found = detect_start_above_uniform_guess(_closing_summary(13.697020212809244), Thresholds(), "qlora", None)
    assert [(f.kind, f.severity, f.step) for f in found] == [("start_above_uniform_guess", "warning", 3)]
    assert found[0].evidence["train_loss_mean"] == 13.697020212809244


def test_a_closing_mean_above_the_known_vocabularys_guess_is_a_start_above_it():
    found = detect_start_above_uniform_guess(_closing_summary(11.15), Thresholds(), "lora", 32000)
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 3)]
    assert "ln 32000 = 10.37" in found[0].message


def test_a_closing_mean_under_the_guess_or_of_a_model_from_scratch_stays_silent():
    assert detect_start_above_uniform_guess(_closing_summary(1.773), Thresholds(), "qlora", None) == []
    assert detect_start_above_uniform_guess(_closing_summary(11.15), Thresholds(), "lora", None) == []
    assert detect_start_above_uniform_guess(_closing_summary(10.6), Thresholds(), "full", 32000,
                                            from_scratch=True) == []
