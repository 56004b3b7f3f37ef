"""Tests of analyzers.zero_held_out: a held-out loss written as exactly 0 at every evaluation while the training loss
at those steps is a real loss above zero is not a measurement (AS112's RohollahHS_ChatBot: validation 0.0000 at every
iteration of every launch from the 17th, the training loss 5.9 -> 4.9)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.analyzers.zero_held_out import detect_zero_held_out
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"
TRAIN = [5.934, 5.831, 5.702, 5.525, 5.270, 4.878]


def _metrics(train, held):
    return {"loss": pd.Series(train, index=range(1, len(train) + 1), dtype="float64"),
            "eval_loss": pd.Series(held, index=range(1, len(held) + 1), dtype="float64")}


def test_a_held_out_loss_exactly_zero_at_every_evaluation_beside_a_real_training_loss_is_a_warning():
    [found] = detect_zero_held_out(_metrics(TRAIN, [0.0] * 6), Thresholds())
    assert (found.kind, found.severity, found.step, found.metric) == ("zero_loss_unexplained", "warning", 1,
                                                                      "eval_loss")


def test_the_run_read_from_loss_files_is_a_warning_from_its_first_evaluation(tmp_path):
    (tmp_path / "train_loss.txt").write_text(str(TRAIN))
    (tmp_path / "valid_loss.txt").write_text(str([0.0] * 6))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "zero_loss_unexplained", 1)


@pytest.mark.parametrize("train, held", [
    (TRAIN, [5.9, 5.8, 5.7, 5.6, 5.5, 5.4]),  # a real held-out loss
    (TRAIN, [5.9, 0.0, 5.7, 5.6, 5.5, 5.4]),  # one zero among real values (another detector's question)
    ([0.0] * 6, [0.0] * 6),  # the training loss at zero too: the collapse detectors' question
    (TRAIN, [0.0, 0.0]),  # two evaluations are too few to say always
])
def test_a_held_out_loss_that_is_measured_or_a_run_at_zero_throughout_is_not_this_finding(train, held):
    assert detect_zero_held_out(_metrics(train, held), Thresholds()) == []


def test_a_healthy_corpus_run_with_a_held_out_loss_stays_silent():
    a = forensics.analyze(CORPUS / "ChaiZhi_transformer")
    assert (a.status, a.findings) == ("healthy", [])


def test_the_chatbot_whose_validation_is_written_as_zero_is_told_at_its_last_launchs_first_iteration():
    a = forensics.analyze(CORPUS / "RohollahHS_ChatBot")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "zero_loss_unexplained", 1)


def test_a_zero_auxiliary_eval_loss_beside_a_measured_eval_loss_is_not_this_finding():
    """The evaluation ran (eval_loss 5.9 -> 5.4 at the same steps): an `eval_aux_loss` at 0 is a part of it that this
    model does not use (a router's balance loss in a dense model), not a held-out loss left unmeasured."""
    metrics = {**_metrics(TRAIN, [5.9, 5.8, 5.7, 5.6, 5.5, 5.4]),
               "eval_aux_loss": pd.Series([0.0] * 6, index=range(1, 7), dtype="float64")}
    assert detect_zero_held_out(metrics, Thresholds()) == []


def test_a_zero_named_eval_loss_with_no_other_measured_one_is_still_the_finding():
    metrics = {"loss": _metrics(TRAIN, [])["loss"],
               "eval_squad_loss": pd.Series([0.0] * 6, index=range(1, 7), dtype="float64")}
    [found] = detect_zero_held_out(metrics, Thresholds())
    assert found.metric == "eval_squad_loss"


def test_a_held_out_loss_printed_as_zero_beside_a_small_training_loss_may_be_rounding_and_is_not_this_finding():
    """Training loss 0.05 -> 0.01: a held-out loss under 0.00005 (0.0000 at 4 decimals) is within what an eval
    without dropout reaches on an easy set, so a 0 printed there may be a rounded measurement."""
    assert detect_zero_held_out(_metrics([0.05, 0.04, 0.03, 0.02, 0.015, 0.01], [0.0] * 6), Thresholds()) == []
