"""Tests of analyzers/fine_tune_start.py: a start above ln(vocabulary).

From session 9's judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


# ---- a run not known to train an adapter whose first loss is well above ln(vocabulary) --------------------------------

import json  # noqa: E402
import math  # noqa: E402

import forensics  # noqa: E402
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess  # noqa: E402


def _first_losses(first: float, second: float) -> dict:
    later = [8.7, 3.5, 0.86, 0.5, 0.36, 0.2, 0.13, 0.11, 0.1, 0.09, 0.08, 0.08]
    values = [first, second] + later
    return {"loss": pd.Series(values, index=list(range(10, 10 * len(values) + 1, 10)), dtype="float64")}


def test_a_full_run_starting_well_above_ln_vocabulary_starts_above_the_uniform_guess():
    (found,) = detect_start_above_uniform_guess(_first_losses(25.68, 15.48), Thresholds(), "unknown", 57525)
    assert (found.kind, found.severity, found.step) == ("start_above_uniform_guess", "warning", 10)
    assert "ln 57525" in found.message


def test_a_fresh_model_starting_at_about_ln_vocabulary_is_no_start_above_it():
    level = math.log(50257)
    assert detect_start_above_uniform_guess(_first_losses(1.05 * level, 0.9 * level), Thresholds(), "full",
                                            50257) == []


def test_a_composite_encoder_decoder_config_gives_the_decoder_vocabulary(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"architectures": ["VisionEncoderDecoderModel"],
                                                 "is_encoder_decoder": True, "model_type": "vision-encoder-decoder",
                                                 "decoder": {"vocab_size": 57525, "model_type": "mbart"},
                                                 "encoder": {"model_type": "donut-swin"}}))
    log = [{"loss": v, "step": s, "epoch": s / 80} for s, v in zip(range(10, 150, 10), _first_losses(25.68, 15.48)["loss"])]
    (run / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 140}))
    analysis = forensics.analyze(run)
    assert analysis.config.get("model.vocab_size") == 57525
    assert analysis.first_incident.kind == "start_above_uniform_guess"


@pytest.mark.parametrize("vocab, from_scratch", [(32, False), (32128, True)])
def test_a_character_vocabulary_or_a_model_built_from_scratch_starting_high_is_not_flagged(vocab, from_scratch):
    assert detect_start_above_uniform_guess(_first_losses(25.68, 15.48), Thresholds(), "unknown", vocab,
                                            from_scratch=from_scratch) == []
