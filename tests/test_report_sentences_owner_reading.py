"""Sentences of the report read as the run's owner would (session 31, fx-readout31: 40 corpus cases, every 35th of
the sorted judgements from the 7th, and the 23 shared cases, read against their own files).

* A row cut to its line(s) ended inside a word or a number: "- fp16 mixed precision was on: a loss scaler skipped
  updates from step 40 (only fp1…" (AnshRaj112_CogniMarket and five shared fp16 cases), "the largest to 63.76 at
  step…" (the step dropped). A cut row now ends at the last clause that closes its parentheses.
* "grad_norm was non-finite at 1 isolated step (40) ...: the fp16 loss scaler skipped those optimizer steps": one
  step is "that optimizer step".
* AlexCheema_RetroInference: "the training loss did not improve either: the later updates made the model worse
  ... more data or regularisation would help" - the cures of overfitting for a model that got worse on its training
  data too. There only fewer epochs or a lower (decaying) rate is advised.
* "grad_norm is Inf from step 3 on (never finite before)" of a metric non-finite at its first logged value: there is
  no "before".
* Ourboros-Alignment-Team_RWKV-RM-Copilot-skipped: "(the run's rate is not in its files)" of a log whose DeepSpeed
  lines print lr=[1e-05, 1e-05] at every report: the rate was not read, which is all the tool can say.
* "Lower the learning rate (0.0001 to 0.0002 for LoRA; those are supervised fine-tuning recipes (objective not known:
  preference and RL recipes run lower))": parentheses two deep; the scope is now a clause of its own.
* 0xafraidoftime_Unsloth-LoRA-Fine-tuning: "about 1.518 over the first logged points and 2.686 over the last" of a
  10-point log were its first and last points alone; they are said so.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.nonfinite import detect_nonfinite_metrics
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds
from forensics.report.notation import clause_end
from forensics.report.text import analysis_text

CORPUS = Path(__file__).resolve().parent / "realworld"
EVIDENCE_ROW = " " * 16 + "- fp16 mixed precision was on: a loss scaler skipped updates from step {}…"


def _trainer_state(folder: Path, rows: list[dict], **files: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": rows[-1]["step"]}))
    for name, content in files.items():
        (folder / f"{name}.json").write_text(json.dumps(content))
    return folder


def _skips(tmp_path: Path, skipped: tuple[int, ...]) -> Path:
    """60 steps of a falling loss, grad_norm NaN and the rate held at each of `skipped`: fp16 loss-scaler skips."""
    rows = []
    for s in range(1, 61):
        lr = rows[-1]["learning_rate"] if s in skipped else 2e-4 * (1 - (s - 1) / 60)
        rows.append({"step": s, "epoch": s / 600, "loss": 2.0 * math.exp(-s / 30) + 0.5 + 0.02 * ((s * 7) % 5 - 2),
                     "grad_norm": float("nan") if s in skipped else 1.0 + 0.1 * (s % 3), "learning_rate": lr})
    return _trainer_state(tmp_path / "skips", rows)


# ---- a row cut short ends at a clause -------------------------------------------------------------------------------

def test_a_clipped_evidence_row_ends_before_the_parenthesis_it_cannot_close(tmp_path):
    text = analysis_text(forensics.analyze(_skips(tmp_path, (30,))))
    assert EVIDENCE_ROW.format(30) in text.splitlines(), text
    assert "(only fp1" not in text and "(only…" not in text, text


def test_the_corpus_case_s_clipped_evidence_row_ends_at_a_clause():
    text = analysis_text(forensics.analyze(CORPUS / "AnshRaj112_CogniMarket"))
    assert EVIDENCE_ROW.format(40) in text.splitlines(), text


def test_a_cut_never_leaves_a_word_or_a_number_half_said():
    # (gemma-2b-it-lora-prompt-recovery's Info row ended "the largest to 63.76 at step…")
    assert clause_end("spikes 8 times from step 83 to 200, the largest to 63.76 at step") == \
        "spikes 8 times from step 83 to 200"
    assert clause_end("updates from step 40 (only fp16 has one; bf16") == "updates from step 40"
    # a parenthesis left open is cut before, wherever it opened
    assert clause_end("method: LoRA (unsloth banner in") == "method: LoRA"


def test_a_row_that_fits_is_not_cut(tmp_path):
    text = analysis_text(forensics.analyze(_skips(tmp_path, (30,))))
    assert " " * 16 + "- an optimizer step skipped at step 30" in text.splitlines(), text  # (one skip: fx-readout32)


# ---- one skipped step is one -----------------------------------------------------------------------------------------

def test_one_skipped_step_is_said_as_one(tmp_path):
    first = forensics.analyze(_skips(tmp_path, (30,))).first_incident
    assert "skipped that optimizer step and the run went on" in first.message, first.message
    assert "those" not in first.message, first.message


def test_several_skipped_steps_are_still_those(tmp_path):
    first = forensics.analyze(_skips(tmp_path, (30, 45))).first_incident
    assert "skipped those optimizer steps and the run went on" in first.message, first.message


def test_the_corpus_case_s_one_skip_is_said_as_one():
    first = forensics.analyze(CORPUS / "AnshRaj112_CogniMarket").first_incident
    assert first.kind == "skipped_steps" and "skipped that optimizer step" in first.message, first.message


# ---- the cure of a run that got worse on both losses -----------------------------------------------------------------

def _evals_turn(train: list[float]) -> dict:
    steps = list(range(1, 21))
    evals = [1.0 - 0.02 * s for s in range(1, 11)] + [0.80 + 0.01 * s for s in range(1, 11)]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=steps, dtype="float64")}


def test_overfitting_advice_is_not_given_where_the_training_loss_rose_too():
    train = [0.9 - 0.01 * s for s in range(1, 11)] + [0.80 + 0.005 * s for s in range(1, 11)]
    [found] = detect_overfitting(_evals_turn(train), Thresholds())
    assert "did not improve either" in found.message, found.message
    assert "not more data or regularisation" in found.message, found.message
    assert "more data or regularisation would help" not in found.message, found.message


def test_overfitting_advice_stays_where_the_training_loss_fell():
    train = [0.9 - 0.02 * s for s in range(1, 21)]
    [found] = detect_overfitting(_evals_turn(train), Thresholds())
    assert "while the training loss keeps falling: overfitting" in found.message, found.message
    assert "fewer epochs, a lower learning rate, more data or regularisation would help" in found.message


def test_a_flat_training_loss_is_not_said_to_have_got_worse():
    # (review 31b: the training loss held at 0.80 while the eval loss turned was told "got worse on it too")
    [found] = detect_overfitting(_evals_turn([0.80] * 20), Thresholds())
    assert "got worse on it too" not in found.message, found.message
    assert "this one fitted it no better after step 10" in found.message, found.message
    assert "not more data or regularisation" in found.message, found.message


def test_a_training_loss_that_rose_past_noise_is_said_to_have_got_worse():
    train = [0.9 - 0.01 * s for s in range(1, 11)] + [0.80 + 0.005 * s for s in range(1, 11)]
    [found] = detect_overfitting(_evals_turn(train), Thresholds())
    assert "this one got worse on it too" in found.message, found.message


def test_no_training_point_after_the_best_says_nothing_of_the_training_fit():
    steps = list(range(1, 21))
    evals = _evals_turn([0.8] * 20)["eval_loss"]
    train = pd.Series([0.9 - 0.01 * s for s in range(1, 11)], index=steps[:10], dtype="float64")
    [found] = detect_overfitting({"loss": train, "eval_loss": evals}, Thresholds())
    assert "got worse on it" not in found.message and "fitted it no better" not in found.message, found.message
    assert "not more data or regularisation" not in found.message, found.message
    assert found.message.endswith("fewer epochs or a lower (or decaying) learning rate would help."), found.message


def test_the_corpus_run_whose_both_losses_rose_is_not_told_to_regularise():
    first = forensics.analyze(CORPUS / "AlexCheema_RetroInference").first_incident
    assert first.kind == "overfitting" and "did not improve either" in first.message, first.message
    assert "more data or regularisation would help" not in first.message, first.message
    # its training loss rose at each of the 11 epochs after the best, 1.2% by their median: past its own noise
    assert "this one got worse on it too" in first.message, first.message


def test_a_training_loss_that_climbs_steadily_but_little_got_worse():
    train = [0.80] * 10 + [0.80 + 0.001 * s + 0.0003 * (-1) ** s for s in range(1, 11)]  # 0.7% by its median
    [found] = detect_overfitting(_evals_turn(train), Thresholds())
    assert "this one got worse on it too" in found.message, found.message


def test_a_training_loss_flat_with_noise_did_not_get_worse():
    train = [0.9 - 0.01 * s for s in range(1, 11)] + [0.80 + 0.004 * (-1) ** s for s in range(1, 11)]
    [found] = detect_overfitting(_evals_turn(train), Thresholds())
    assert "fitted it no better after step 10" in found.message, found.message


# ---- nothing before the first point ----------------------------------------------------------------------------------

def test_a_metric_non_finite_from_its_first_point_has_no_before():
    steps = list(range(3, 100, 4))
    metrics = {"loss": pd.Series(2.44, index=steps, dtype="float64"),
               "grad_norm": pd.Series(np.inf, index=steps, dtype="float64")}
    [found] = [f for f in detect_nonfinite_metrics(metrics, Thresholds()) if f.metric == "grad_norm"]
    assert "never finite before" not in found.message, found.message
    assert "already at its first logged value" in found.message, found.message


def test_a_metric_finite_before_says_its_last_finite_value():
    steps = list(range(1, 21))
    values = [2.0 - 0.05 * s for s in range(1, 11)] + [np.nan] * 10
    [found] = detect_nonfinite_metrics({"loss": pd.Series(values, index=steps, dtype="float64")}, Thresholds())
    assert "last finite 1.5 at step 10" in found.message, found.message


# ---- the learning-rate advice ----------------------------------------------------------------------------------------

def test_a_rate_the_tool_did_not_read_is_not_said_to_be_absent():
    text = analysis_text(forensics.analyze(CORPUS / "Ourboros-Alignment-Team_RWKV-RM-Copilot-skipped"))
    assert "not in its files" not in text, text
    assert "no learning rate was read from the run's files" in " ".join(text.split()), text


def test_the_rate_advice_s_scope_is_not_a_parenthesis_inside_a_parenthesis(tmp_path):
    rows = [{"step": s, "epoch": s / 1000, "learning_rate": 2e-3 * min(1, s / 5),
             "loss": (0.35 if s < 5 else 0.35 + (s - 5) * 0.01) + 0.01 * ((s * 7) % 5 - 2),
             "grad_norm": 0.1 if s < 5 else 0.1 * (s - 4)} for s in range(1, 201)]
    run = _trainer_state(tmp_path / "lora_hot", rows, adapter_config={
        "peft_type": "LORA", "r": 8, "base_model_name_or_path": "meta-llama/Meta-Llama-3-8B"})
    [lr] = [c for c in forensics.analyze(run).causes if c.cause == "lr_too_high"]
    assert lr.suggestion.startswith("Lower the learning rate (0.0001 to 0.0002 for LoRA); those are supervised "
                                    "fine-tuning recipes (objective not known"), lr.suggestion
    depth = max(np.cumsum([{"(": 1, ")": -1}.get(ch, 0) for ch in lr.suggestion]))
    assert depth == 1, lr.suggestion


# ---- where the loss began and ended, said as measured ----------------------------------------------------------------

def test_a_ten_point_log_s_ends_are_said_as_single_points():
    first = forensics.analyze(CORPUS / "0xafraidoftime_Unsloth-LoRA-Fine-tuning").first_incident
    assert first.kind == "no_learning_evidence", first
    assert "1.518 at its first logged point and 2.686 at its last" in first.message, first.message
    assert "over the first logged points" not in first.message, first.message


def test_a_longer_log_s_end_is_said_as_the_median_of_its_last_tenth():
    first = forensics.analyze(CORPUS / "aloshdenny_kevin-token-compressor").first_incident
    assert "about 2.113 over its last 10 (100 points" in first.message, first.message
