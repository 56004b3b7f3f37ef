"""The eval-only finding (forensics/analyzers/no_training_loss.py): its message names the closing summary's
train_loss, and an evaluation's own event file leaves that summary standing.

From batch AS64 (tests/realworld/PROVENANCE.md: Bensonluo_4bit-QLoRA-post-training)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.no_training_loss import eval_only
from forensics.config import Thresholds


TH = Thresholds()


def test_the_eval_only_message_names_the_closing_summarys_mean():
    at = [3]
    metrics = {"eval_loss": pd.Series([1.9006], index=at), "train_loss": pd.Series([1.7728], index=at),
               "train_runtime": pd.Series([14.1], index=at), "epoch": pd.Series([1.0], index=at)}
    (found,) = eval_only(metrics, TH)
    assert found.kind == "no_learning_evidence" and "train_loss, 1.773" in found.message


def test_the_eval_only_message_without_a_summary_names_none():
    (found,) = eval_only({"eval_loss": pd.Series([1.9006], index=[3])}, TH)
    assert "train_loss" not in found.message


def test_an_hf_final_evaluations_own_event_file_leaves_the_closing_summary_standing():
    """Bensonluo_4bit-QLoRA-post-training: the training file's closing summary and the evaluation's file share only
    the epoch counter at step 3: the second is no later attempt of the first."""
    a = forensics.analyze(Path(__file__).parent / "realworld" / "Bensonluo_4bit-QLoRA-post-training")
    assert "train_loss" in a.timeline.final()["metric"].tolist()
    assert "train_loss, 1.773" in a.first_incident.message
