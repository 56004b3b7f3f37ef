"""Corpus batch AS65 found wrong: a summed loss read as a per-token start far above any vocabulary's guess though its
own validation loss never came under that guess (raquel-github_ivd), a TRL PPO console printing its metrics as
pretty-printed JSON dicts (BuonHobo_fake-gpt), a list of checkpoints' validation perplexities (Roushelfy_LLM_HW3) and
an LR dropped at a resume that logged its step twice (wadkisson_Personal-Chatbot)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.config import Thresholds
from forensics.ingest.console_lines.checkpoint_evals import checkpoint_eval_reader
from forensics.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _epochs(values):
    return pd.Series(dict(enumerate(values, start=1)), dtype="float64")


# a question generator's NLLLoss summed over a game's words: the train loss memorizes its way down to a few nats, the
# validation loss stays tens of nats (raquel-github_ivd's shape, 20 epochs)
_SUMMED_TRAIN = [148.4, 119.2, 85.6, 63.8, 48.1, 36.0, 27.9, 20.7, 15.2, 11.3, 8.7, 6.5, 4.9, 3.6, 3.2, 3.0, 2.9,
                 2.8, 2.7, 2.67]
_SUMMED_VALIDATION = [159.3, 130.2, 97.0, 75.1, 63.8, 60.9, 60.1, 59.9, 60.2, 61.0, 61.5, 62.4, 63.4, 64.7, 65.8,
                      66.9, 67.9, 68.5, 69.0, 69.1]


def _start_kinds(train, validation):
    metrics = {"loss": _epochs(train), "eval_loss": _epochs(validation)}
    return [f.kind for f in detect_start_above_uniform_guess(metrics, Thresholds(), "unknown", None)]


def test_a_start_far_above_any_guess_whose_eval_never_comes_under_it_is_a_sum_not_a_start():
    assert _start_kinds(_SUMMED_TRAIN, _SUMMED_VALIDATION) == []


def test_the_same_start_beside_an_eval_that_comes_under_the_guess_is_still_a_start_above_it():
    per_token_eval = [v / 20 for v in _SUMMED_VALIDATION]  # 7.97 -> 3.0: a per-token mean's level
    assert _start_kinds(_SUMMED_TRAIN, per_token_eval) == ["start_above_uniform_guess"]


def test_the_summed_question_generator_is_first_judged_overfitting():
    analysis = forensics.analyze(CORPUS / "raquel-github_ivd")
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "overfitting" and abs(analysis.first_incident.step - 30) <= 8
    assert "start_above_uniform_guess" not in [f.kind for f in analysis.findings]


_CHECKPOINT_PPLS = {10: 16.6158, 20: 16.1096, 30: 15.7774, 40: 15.8478, 50: 15.8203, 60: 15.7382}


def _checkpoint_list(base: str = "opt-350m valid 19.4890\ndetected_model valid 14.9962\n") -> str:
    return "Using device: cuda\n" + base + "".join(f"results/checkpoint-{n} valid {ppl}\n"
                                                   for n, ppl in _CHECKPOINT_PPLS.items())


def test_a_checkpoint_list_of_validation_perplexities_is_a_log_of_eval_losses_from_the_base_at_step_0(tmp_path):
    (tmp_path / "ppl.log").write_text(_checkpoint_list())
    frame = forensics.load_timeline(tmp_path).frame
    evals = frame[frame.metric == "eval_loss"].set_index("step").value
    assert list(evals.index) == [0, *_CHECKPOINT_PPLS]  # the comparison model (detected_model) left out
    assert abs(evals[0] - math.log(19.4890)) < 1e-9 and abs(evals[60] - math.log(15.7382)) < 1e-9


def test_the_checkpoints_of_a_run_that_learned_and_held_its_level_are_healthy():
    analysis = forensics.analyze(CORPUS / "Roushelfy_LLM_HW3")
    assert analysis.status == "healthy" and analysis.first_incident is None


def test_two_checkpoint_lines_in_a_note_are_no_log(tmp_path):
    note = "we kept results/checkpoint-10 valid 16.6\nand results/checkpoint-20 valid 16.1\nopt-350m valid 19.5\n"
    assert not log_hinted(note.encode())
    assert checkpoint_eval_reader(note) is None
