"""Tests of ingest.json_history: a run's summary JSON holding its loss lists beside scalars and settings.

Corpus batch AS116 found kasiranaweera_EduLM-Gemma4's logs/training_metrics.json unread: `{"final_train_loss": ...,
"best_val_loss": ..., "total_steps": 60, "train_losses": [6 values], "eval_losses": [3 values], "hyperparameters":
{...}}` - the parallel-list history sniffed only where the lists open the dict."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.discover.run import discover
from forensics.errors import NotARunDirectory
from forensics.ingest import json_history

_TRAIN = [1.73, 0.40, 0.15, 0.07, 0.03, 0.013]
_EVAL = [1.91, 1.76, 1.76]


def _dump(folder, name, value):
    (folder / name).write_text(json.dumps(value, indent=2))
    return folder / name


def _summary(**more):
    return {"final_train_loss": _TRAIN[-1], "best_val_loss": 1.76, "model": "gemma", "total_steps": 60,
            "train_losses": _TRAIN, "eval_losses": _EVAL, "hyperparameters": {"lr": 2e-4, "lora_r": 16}, **more}


def test_a_summary_with_scalars_before_its_loss_lists_is_found(tmp_path):
    path = _dump(tmp_path, "training_metrics.json", _summary())
    assert discover(tmp_path).json_histories == [path]


def test_the_training_list_is_spread_over_the_total_steps_the_summary_states(tmp_path):
    # six logs over 60 steps: one every 10, the last at the last step; three evaluations at the ends of their thirds
    frame = json_history.read(_dump(tmp_path, "training_metrics.json", _summary())).frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [10, 20, 30, 40, 50, 60]
    assert frame[frame.metric == "eval_loss"].set_index("step")["value"].to_dict() == {20: 1.91, 40: 1.76, 60: 1.76}


def test_a_total_the_list_does_not_divide_leaves_the_list_numbered_by_place(tmp_path):
    frame = json_history.read(_dump(tmp_path, "training_metrics.json", _summary(total_steps=65))).frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("config", [
    {"learning_rate": 2e-4, "lora_r": 16, "target_modules": ["q_proj", "k_proj"], "epochs": 3},
    {"test_size": 0.2, "seed": 42, "train": [0.8, 0.1, 0.1]},  # split fractions under a bare `train`, after scalars
])
def test_a_config_with_a_list_is_no_history(tmp_path, config):
    _dump(tmp_path, "config_run.json", config)
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


_CASE = Path(__file__).parent / "realworld" / "kasiranaweera_EduLM-Gemma4"


def test_the_corpus_case_reads_its_metrics_summary_and_not_its_dataset_summary():
    # data/dataset_summary.json (scalars and lists of words beside them) is a data set's description, no history
    assert [p.name for p in discover(_CASE).json_histories] == ["training_metrics.json"]
    frame = json_history.read(_CASE / "logs" / "training_metrics.json").frame
    assert frame[frame.metric == "eval_loss"]["step"].tolist() == [20, 40, 60]


def test_a_stated_logging_interval_places_the_losses_before_the_max_steps_they_never_reached(tmp_path):
    # max_steps is a setting, not what ran: five losses logged every 100 steps are at 100..500, not spread to 1000
    summary = {"max_steps": 1000, "logging_steps": 100, "train_losses": [2.1, 1.8, 1.6, 1.5, 1.45]}
    frame = json_history.read(_dump(tmp_path, "training_metrics.json", summary)).frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [100, 200, 300, 400, 500]


def test_a_max_steps_alone_does_not_spread_the_losses(tmp_path):
    summary = {"max_steps": 1000, "train_losses": [2.1, 1.8, 1.6, 1.5, 1.45]}
    frame = json_history.read(_dump(tmp_path, "training_metrics.json", summary)).frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [1, 2, 3, 4, 5]


def test_a_logging_interval_longer_than_the_stated_total_yields_to_the_total(tmp_path):
    # six losses every 100 steps would end at 600, past the 60 steps the run states it ran: the total is what ran
    frame = json_history.read(_dump(tmp_path, "training_metrics.json", _summary(logging_steps=100))).frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [10, 20, 30, 40, 50, 60]


def test_an_eval_results_file_with_per_sample_losses_is_no_run(tmp_path):
    # evaluate.py's summary: a perplexity, an average loss and the loss of each sample - no training record
    _dump(tmp_path, "eval_results.json", {"perplexity": 6.1, "avg_loss": 1.81, "num_samples": 5,
                                          "losses": [1.9, 1.7, 1.85, 1.75, 1.86]})
    assert discover(tmp_path).json_histories == []
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


@pytest.mark.parametrize("name", ["train_losses", "training_loss", "train_loss", "training_losses"])
def test_a_training_loss_list_after_scalars_is_still_found(tmp_path, name):
    path = _dump(tmp_path, "summary.json", {"final_loss": 1.45, "num_steps": 5, name: [2.1, 1.8, 1.6, 1.5, 1.45]})
    assert discover(tmp_path).json_histories == [path]
