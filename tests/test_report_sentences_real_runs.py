"""Sentences of the report a user reads that the run's own numbers contradicted (session 25, rv-reports: a reading of
43 corpus reports against their judgements).

* MuQlanyu_2025-Project-178_sft: "the model fitted its training data" beside a training loss that went 1.275 -> 1.255
  over three epochs (-1.6%, inside its noise): a held-out loss that never improved says the model fitted its training
  data only where the training loss did fall clearly (IMLHF_lstm_text_summary: 8.86 -> 7.77).
* ChristianPE1_transformer-test: "logged learning_rate peaked at 1.546 (step 117, where the trouble began; higher
  after it)" - a rate higher after a point did not peak there (it ran on to 2.0e8). Where nothing later is higher the
  peak is still said so.
* AyushK0808_financial-advisor: after "loss is exactly 0 from the first logged step 5 ...", "Then step 5: the loss did
  not fall: about 0 over the first logged points and 0 over the last ... Check ... whether training started from an
  already trained model": a loss of exactly 0 is judged by the zero-loss findings; a doubt that it "did not fall" from
  0 beside one adds nothing and advises for a loss that is not there. Without such a finding the doubt stays.
* toddllm_fine-tune-gpt-oss: "stays under 0.1 from step 425 to step 1500 over 55.57 epochs": steps 425-1500 are
  about 40 epochs; 55.57 is the epoch the log ends at, the reason the looser memorization level applies.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.analyzers.memorization import memorization_level
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.report.text import analysis_text
from forensics.analyzers.redundant_doubts import without_doubt_beside_a_zero_loss

CORPUS = Path(__file__).resolve().parent / "realworld"

# MuQlanyu's fifteen training losses (steps 100-1500) and five eval losses (300-1500), as its TensorBoard file logs
# them (rounded)
FLAT_TRAIN = [1.3054, 1.2442, 1.3008, 1.2525, 1.2951, 1.2564, 1.3148, 1.248, 1.2291, 1.31, 1.2702, 1.2733, 1.2294,
              1.2802, 1.247]
FLAT_EVAL = [1.2834, 1.2820, 1.2811, 1.2807, 1.2808]
# IMLHF's ten Keras iterations: a training loss that fell clearly beside a validation loss that never improved
IMLHF_TRAIN = [8.8566, 7.9593, 7.8776, 7.8286, 7.8198, 7.8023, 7.7811, 7.7844, 7.7648, 7.7676]
IMLHF_VAL = [7.9603, 7.9788, 7.9794, 8.0276, 8.0019, 7.9753, 7.9945, 7.9018, 7.9762, 7.9674]


def _held_out_flat_message(train: list[float], evals: list[float], every: int) -> str:
    steps = [every * (i + 1) for i in range(len(train))]
    run = {"loss": pd.Series(train, index=steps, dtype="float64"),
           "eval_loss": pd.Series(evals, index=steps[-len(evals):], dtype="float64")}
    [finding] = detect_no_learning_evidence(run, Thresholds())
    assert "never improved on its first evaluation" in finding.message, finding.message
    return finding.message


def test_a_flat_training_loss_beside_a_flat_held_out_loss_is_not_said_to_have_fitted_its_data():
    message = _held_out_flat_message(FLAT_TRAIN, FLAT_EVAL, 100)
    assert "fitted its training data" not in message, message
    assert "did not clearly fall either" in message, message


def test_a_training_loss_that_fell_beside_a_flat_held_out_loss_is_still_said_to_have_fitted_its_data():
    message = _held_out_flat_message(IMLHF_TRAIN, IMLHF_VAL, 1)
    assert "the model fitted its training data" in message, message


def test_muqlanyu_report_does_not_say_the_model_fitted_its_training_data():
    text = analysis_text(forensics.analyze(CORPUS / "MuQlanyu_2025-Project-178_sft"))
    assert "never improved on its first evaluation" in text, text
    assert "fitted its training data" not in " ".join(text.split()), text


def test_imlhf_report_still_says_the_model_fitted_its_training_data():
    text = analysis_text(forensics.analyze(CORPUS / "IMLHF_lstm_text_summary"))
    assert "fitted its training data" in " ".join(text.split()), text


# ---- a learning rate higher after the trouble did not peak there ---------------------------------------------------

# (the unit tests of the wording: tests/test_review_day11_advice_d.py)

def test_christianpe1_report_does_not_say_the_ever_rising_rate_peaked_at_the_trouble():
    analysis = forensics.analyze(CORPUS / "ChristianPE1_transformer-test")
    lines = [e for c in analysis.causes for e in c.evidence if e.startswith("logged learning_rate")]
    assert lines and not any("peaked" in e for e in lines), lines
    assert any("1.546 (step 117, where the trouble began; higher after it)" in e for e in lines), lines


# ---- no "the loss did not fall: about 0 ... and 0" beside a finding that the loss is exactly 0 ---------------------

def _doubt(head: float, tail: float, step: int = 5) -> Finding:
    return Finding("no_learning_evidence", "warning", step, "the loss did not fall", end_step=40, metric="loss",
                   evidence={"head": head, "tail": tail, "n_points": 8})


def _zero(kind: str = "zero_loss_unexplained", step: int = 5) -> Finding:
    return Finding(kind, "warning", step, "loss is exactly 0", end_step=40, metric="loss")


def test_a_doubt_about_a_loss_of_zero_beside_a_zero_loss_finding_is_dropped():
    assert [f.kind for f in without_doubt_beside_a_zero_loss([_zero(), _doubt(0.0, 0.0)])] == ["zero_loss_unexplained"]
    kept = without_doubt_beside_a_zero_loss([_zero("masked_nan_loss", 1), _doubt(0.0, 0.0, 1)])
    assert [f.kind for f in kept] == ["masked_nan_loss"]


def test_a_doubt_about_a_loss_of_zero_with_nothing_else_to_say_it_stays():
    assert [f.kind for f in without_doubt_beside_a_zero_loss([_doubt(0.0, 0.0)])] == ["no_learning_evidence"]


def test_a_doubt_about_a_loss_above_zero_stays_beside_a_zero_loss_finding():
    kept = without_doubt_beside_a_zero_loss([_zero(step=30), _doubt(2.1, 2.0)])
    assert [f.kind for f in kept] == ["zero_loss_unexplained", "no_learning_evidence"]


def test_ayushk0808_report_does_not_doubt_a_fall_from_a_loss_of_zero():
    analysis = forensics.analyze(CORPUS / "AyushK0808_financial-advisor")
    assert analysis.first_incident.kind == "zero_loss_unexplained" and analysis.status == "warning"
    assert "no_learning_evidence" not in [f.kind for f in analysis.findings]
    text = " ".join(analysis_text(analysis).split())
    assert "the loss did not fall" not in text and "loss is exactly 0" in text, text


# ---- the epoch a log ends at is not the span a memorized loss stayed low over ---------------------------------------

def test_the_many_epochs_clause_says_the_epoch_the_log_ends_at_not_a_span():
    steps = list(range(1, 61))
    run = {"loss": pd.Series([0.5] * 60, index=steps, dtype="float64"),
           "epoch": pd.Series([s / 2 for s in steps], index=steps, dtype="float64")}
    _, why = memorization_level(run, Thresholds())
    assert why == " (by epoch 30: many passes over the same examples)", why


def test_toddllm_report_does_not_call_the_last_epoch_a_span():
    text = " ".join(analysis_text(forensics.analyze(CORPUS / "toddllm_fine-tune-gpt-oss")).split())
    assert "over 55.57 epochs" not in text, text
    assert "to step 1500 (by epoch 55.57: many passes over the same examples)" in text, text
