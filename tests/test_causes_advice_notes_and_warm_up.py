"""Tests of the causes' advice (causes/, causes/roles.py): scaler notes and warm-up claims.

Two advice fixes from the afternoon's re-audit of the causes over the real corpus (tests/realworld).

* A note that the fp16 scaler only skipped a few updates ("FP16 overflow ... Nothing to change for these alone") was
  shown as the Cause of a first incident it has nothing to do with (adhikarinarayan: overfitting at step 1500, the
  skips from 2058). It is shown as a note, not the cause.
* "too far out for any recipe" was said of BERT-large pre-training's 6e-3 (NVIDIA DeepLearningExamples issue 252:
  LAMB, objective and method not in the log), where only the fine-tuning recipes are ruled out.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.causes.roles import leading_cause
from forensics.report.text import analysis_text


CORPUS = Path(__file__).resolve().parent / "realworld"


def test_skips_the_scaler_recovered_are_a_note_beside_an_overfitting():
    a = forensics.analyze(CORPUS / "adhikarinarayan_EM_phase_transition")
    assert a.first_incident.kind == "overfitting"
    assert leading_cause(a.causes, a.first_incident) is None or leading_cause(a.causes, a.first_incident).cause != "fp16_overflow"
    text = analysis_text(a)
    assert "Note            FP16 overflow" in text and "Cause           FP16 overflow" not in text, text


def test_skips_are_still_the_cause_where_they_are_the_first_incident():
    shared = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "llama31-8b-unsloth-lora-60step-b"
    if not shared.is_dir():
        pytest.skip("the shared real-world corpus is not beside the checkout")
    a = forensics.analyze(shared)
    assert a.first_incident.kind == "skipped_steps"
    assert "Note            FP16" not in analysis_text(a)


def test_a_pretraining_rate_is_not_called_out_of_every_recipe_when_the_objective_is_unknown():
    a = forensics.analyze(CORPUS / "NVIDIA_DeepLearningExamples_issue252")
    (lr,) = [c for c in a.causes if c.cause == "lr_too_high"]
    assert not any("too far out for any recipe" in e for e in lr.evidence), lr.evidence
    assert any("far above every fine-tuning recipe" in e for e in lr.evidence), lr.evidence


# ---- "no warm-up" needs a first logged rate early enough to show one -------------------------------------------------

from forensics.causes import infer_causes  # noqa: E402
from forensics.config import RunConfig, Thresholds  # noqa: E402
from forensics.findings import Finding  # noqa: E402
from forensics.timeline import LogRecords, build_timeline  # noqa: E402

import pandas as pd  # noqa: E402


def _flat_rate_from(first: int, every: int, planned: int, points: int = 5):
    """A rate at its peak from the first logged point, grad_norm going NaN at the last point, `planned` steps set."""
    steps = list(range(first, first + points * every, every))
    rows = [(s, "learning_rate", 2e-4) for s in steps] + [(s, "grad_norm", 1.0) for s in steps[:-1]]
    rows += [(steps[-1], "grad_norm", float("nan"))]
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])
    config = RunConfig()
    config.add("max_steps", planned, "training_args.bin")
    config.add("method", "full", "training_args.bin")
    error = Finding(kind="nonfinite_metric", severity="error", step=steps[-1], message="nan", metric="grad_norm")
    return {c.cause for c in infer_causes(config, timeline, [error], [], Thresholds())}


def test_a_rate_at_its_peak_at_step_400_of_10000_says_nothing_of_a_warm_up_before_it():
    """yangziao56, JustinBStrong, ohalon (reviewer): the first logged rate (two logging intervals in) came after the
    shortest warm-up a recipe uses (3% of the run, 300 steps) would have ended, so "no warm-up" cannot be read."""
    assert "no_warmup" not in _flat_rate_from(first=400, every=200, planned=10000)


def test_a_rate_at_its_peak_at_the_first_steps_shows_no_warm_up():
    assert "no_warmup" in _flat_rate_from(first=200, every=200, planned=10000)


def _rising_rate_through_the_break(break_at: int):
    return _rate_lines([1e-4 * s for s in range(1, 11)], break_at)


def _rate_lines(rates: list[float], break_at: int) -> list[str]:
    """The cause evidence that says where the logged learning rate was, for a grad_norm NaN at `break_at`."""
    steps = list(range(1, len(rates) + 1))
    rows = [(s, "learning_rate", r) for s, r in zip(steps, rates)]
    rows += [(s, "grad_norm", 1.0) for s in steps if s != break_at]
    rows += [(break_at, "grad_norm", float("nan"))]
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])
    error = Finding(kind="nonfinite_metric", severity="error", step=break_at, message="nan", metric="grad_norm")
    found = infer_causes(RunConfig(), timeline, [error], [], Thresholds())
    return [e for c in found for e in c.evidence if e.startswith("logged learning_rate")]


def test_a_peak_at_the_step_of_the_trouble_is_not_said_to_come_before_it():
    """sugarandgugu, lf-sft-graduate-agent (reviewer): '(step 58, before the trouble at step 58)'."""
    lines = _rising_rate_through_the_break(5)
    assert lines and all("before the trouble at step 5" not in e for e in lines), lines
    assert any("step 5, where the trouble began" in e for e in lines), lines


# ---- a rate higher after the trouble did not peak there (ChristianPE1_transformer-test: "peaked at 1.546 (step 117,
# where the trouble began; higher after it)", the rate running on to 2.0e8; tests/test_report_sentences_real_runs.py)

def test_a_rate_still_rising_through_the_trouble_is_not_said_to_have_peaked_there():
    lines = _rising_rate_through_the_break(5)
    assert lines and not any("peaked" in e for e in lines), lines
    assert any("0.0005 (step 5, where the trouble began; higher after it)" in e for e in lines), lines


def test_a_rate_that_dipped_before_the_trouble_and_rose_after_is_not_said_to_have_peaked_before_it():
    lines = _rate_lines([1e-4, 3e-4, 2e-4, 2e-4, 2e-4, 2e-4, 5e-4, 8e-4, 1e-3, 1e-3], break_at=5)
    assert lines and not any("peaked" in e for e in lines), lines
    assert any("at most 0.0003 up to the trouble at step 5 (step 2; higher after it)" in e for e in lines), lines


def test_a_rate_that_peaked_at_the_trouble_is_still_said_to_have_peaked():
    """A warm-up to 1e-3 at step 5, the trouble there, then a decay: the rate did peak at the trouble."""
    lines = _rate_lines([2e-4, 4e-4, 6e-4, 8e-4, 1e-3, 9e-4, 8e-4, 7e-4, 6e-4, 5e-4], break_at=5)
    assert any(e.startswith("logged learning_rate peaked at 0.001 (step 5)") for e in lines), lines


def test_a_fresh_scaler_calibrating_is_nothing_to_change_however_short_the_log():
    """chenkx612 (reviewer): 6 skips at steps 1-6 of a short log, read by the skipped-steps finding as a fresh scaler
    halving its way down, were told 'Train in bf16' because they are over 2% of the logged steps."""
    a = forensics.analyze(CORPUS / "chenkx612_local-roleplay-llm")
    (fp16,) = [c for c in a.causes if c.cause == "fp16_overflow"]
    assert fp16.suggestion.startswith("Nothing to change"), fp16.suggestion
