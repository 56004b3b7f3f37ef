"""Tests of the judgement of run_clm outputs: an eval loss near zero, a summary-only run.

From day 9's third pass over spikes, memorization and profiles the tool got wrong on real runs."""
from __future__ import annotations

import json
import math

import pytest

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (4) no training-loss curve, but the summary says many epochs, a mean loss many times the final eval loss ------


def _run_clm_output(folder, epochs, steps, train_loss, eval_loss, eval_accuracy):
    """transformers' run_clm.py output folder with logging_steps longer than the run: trainer_state.json holding only
    the end summary, the train/eval/all results files, and the TensorBoard run with the summary and the evaluation."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    summary = {"epoch": float(epochs), "step": steps, "total_flos": 1.5e14, "train_loss": train_loss,
               "train_runtime": 109.7, "train_samples_per_second": 2.735, "train_steps_per_second": 2.735}
    state = {"best_metric": None, "epoch": float(epochs), "global_step": steps, "log_history": [summary],
             "max_steps": steps, "num_train_epochs": epochs, "total_flos": 1.5e14}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    train = {"epoch": float(epochs), "train_loss": train_loss, "train_runtime": 109.7, "train_samples": 3,
             "train_samples_per_second": 2.735, "train_steps_per_second": 2.735}
    evals = {"epoch": float(epochs), "eval_accuracy": eval_accuracy, "eval_loss": eval_loss, "eval_runtime": 0.34,
             "eval_samples": 3, "eval_samples_per_second": 8.7, "eval_steps_per_second": 8.7,
             "perplexity": math.exp(eval_loss)}
    (folder / "train_results.json").write_text(json.dumps(train, indent=4))
    (folder / "eval_results.json").write_text(json.dumps(evals, indent=4))
    (folder / "all_results.json").write_text(json.dumps({**evals, **train}, indent=4))
    # the Trainer's TensorBoardCallback: train/* at the end of training, eval/* from trainer.evaluate() after it
    writer = SummaryWriter(str(folder / "runs" / "Oct11_01-48-25_host"))
    for key in ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss",
                "epoch"):
        writer.add_scalar(f"train/{key}", {**summary, "epoch": float(epochs)}[key], steps)
    for key in ("loss", "accuracy", "runtime"):
        writer.add_scalar(f"eval/{key}", evals[f"eval_{key}"], steps)
    writer.add_scalar("train/epoch", float(epochs), steps)
    writer.close()


def test_an_eval_loss_near_zero_after_a_hundred_epochs_under_a_mean_train_loss_ten_times_higher_is_memorization(
        tmp_path):
    _run_clm_output(tmp_path, 100, 300, 0.7794, 0.0834, 0.9857)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization", [f.message for f in a.findings]
    assert a.first_incident.step == 300
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"]


def test_a_summary_only_run_of_three_epochs_with_an_ordinary_eval_loss_still_lacks_learning_evidence(tmp_path):
    _run_clm_output(tmp_path, 3, 300, 2.41, 2.05, 0.55)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]
    assert not [f for f in a.findings if f.kind == "memorization"]
