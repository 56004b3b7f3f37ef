"""Two advice fixes from the afternoon's re-audit of the causes over the real corpus (tests/realworld).

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
from forensics.report.story import leading_cause
from forensics.report.text import analysis_text

CORPUS = Path(__file__).resolve().parent / "realworld"


def test_skips_the_scaler_recovered_are_a_note_beside_an_overfitting():
    a = forensics.analyze(CORPUS / "adhikarinarayan_EM_phase_transition")
    assert a.first_incident.kind == "overfitting"
    assert leading_cause(a) is None or leading_cause(a).cause != "fp16_overflow"
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
