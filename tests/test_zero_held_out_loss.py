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
