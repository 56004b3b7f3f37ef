"""Tests of finding and reading metric-history JSON whose loss is not the first thing in it (corpus batch AS106).

Four logs were left unread (NotARunDirectory): two Keras `history.history` dicts whose `loss` list is not the first
key (AlexBella365_FrenchTextGenerator opens with `val_loss`, JoncyKeda_LSTM_TEXT_GENERATOR with `accuracy`), a dict
of row lists by split (adityatiwari049_Kaya-SLM's `{"train": [{step, loss, ...}], "val": [{step, val_loss, ...}]}`)
and a list of AlphaZero iterations, each holding its training records under `training_losses`
(DidulaThavisha_alpha_llm, whose optimised loss is `total_loss`)."""
from __future__ import annotations

import json
import math

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import json_history
from forensics.discover.run import discover


def _dump(folder, name, value):
    (folder / "output").mkdir(exist_ok=True)
    path = folder / "output" / name
    path.write_text(json.dumps(value, indent=4))
    return path


def _series(path, metric):
    frame = json_history.read(path).frame
    return frame[frame.metric == metric].set_index("step")["value"].to_dict()


# AlexBella365_FrenchTextGenerator's output/history.json (Keras, old 'acc' names), its first five epochs
_KERAS_VAL_FIRST = {"val_loss": [2.0810256004333496, 2.1043927669525146, 2.127135992050171, 2.1459617614746094,
                                 2.1579833030700684],
                    "val_acc": [0.453125, 0.453125, 0.453125, 0.4609375, 0.46875],
                    "loss": [0.7710601687431335, 0.7264052629470825, 0.6975547075271606, 0.6681598424911499,
                             0.6598238348960876],
                    "acc": [0.7578125, 0.7890625, 0.7890625, 0.81640625, 0.794921875]}
# JoncyKeda_LSTM_TEXT_GENERATOR's output/history.json (Keras 2.x names, a ReduceLROnPlateau rate)
_KERAS_ACCURACY_FIRST = {"accuracy": [0.02377956733107567, 0.03019627556204796, 0.03132863715291023],
                         "loss": [6.851889610290527, 6.362435340881348, 6.253424167633057],
                         "val_accuracy": [0.0322093591094017, 0.0322093591094017, 0.0322093591094017],
                         "val_loss": [6.610692024230957, 6.665506839752197, 6.644455909729004],
                         "learning_rate": [0.0010000000474974513, 0.0010000000474974513, 0.0010000000474974513]}


@pytest.mark.parametrize("history", [_KERAS_VAL_FIRST, _KERAS_ACCURACY_FIRST], ids=["val_loss_first", "acc_first"])
def test_a_keras_history_dict_whose_loss_list_is_not_first_is_found_and_read(tmp_path, history):
    path = _dump(tmp_path, "history.json", history)
    assert discover(tmp_path).json_histories == [path]
    assert _series(path, "eval_loss")[1] == pytest.approx(history["val_loss"][0])
    assert _series(path, "loss")[3] == pytest.approx(history["loss"][2])


def test_number_lists_without_a_loss_list_or_beside_settings_are_no_history(tmp_path):
    # a tokenized sample (lists of ids) and a config whose loss is a setting stay unread, as before
    _dump(tmp_path, "sample.json", {"input_ids": [101, 2023, 102], "attention_mask": [1, 1, 1]})
    _dump(tmp_path, "config.json", {"dropout": [0.1, 0.2], "lr": 0.001, "loss": ["mse", "ce"]})
    _dump(tmp_path, "eval_results.json", {"accuracy": [0.81, 0.84], "eval_loss": 0.52, "epoch": 3.0})
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


# adityatiwari049_Kaya-SLM's logs/training_log.json, shortened: a train and a val list of row dicts, resumed sessions
# appended (steps 14,100 - 14,200 again in epoch 4)
_SPLIT_ROWS = {
    "train": [{"step": 13100, "epoch": 3, "loss": 1.275, "avg": 1.4066, "lr": 0.0003},
              {"step": 13200, "epoch": 3, "loss": 1.4003, "avg": 1.4088, "lr": 0.0003},
              {"step": 14100, "epoch": 3, "loss": 1.2247, "avg": 1.3956, "lr": 0.00015},
              {"step": 14200, "epoch": 3, "loss": 1.2916, "avg": 1.3922, "lr": 7.5e-05},
              {"step": 14100, "epoch": 4, "loss": 1.367, "avg": 1.3714, "lr": 0.00015},
              {"step": 14200, "epoch": 4, "loss": 1.3915, "avg": 1.3652, "lr": 7.5e-05}],
    "val": [{"step": 13200, "epoch": 3, "val_loss": 1.2893, "ppl": 3.63, "lr": 0.0003},
            {"step": 14100, "epoch": 3, "val_loss": 1.2573, "ppl": 3.52, "lr": 7.5e-05},
            {"step": 14100, "epoch": 4, "val_loss": 1.2564, "ppl": 3.51, "lr": 7.5e-05}]}


def test_a_dict_of_train_and_val_row_lists_is_found_and_read_as_loss_and_eval_loss(tmp_path):
    path = _dump(tmp_path, "training_log.json", _SPLIT_ROWS)
    assert discover(tmp_path).json_histories == [path]
    frame = json_history.read(path).frame
    assert frame[frame.metric == "eval_loss"].value.tolist() == [1.2893, 1.2573, 1.2564]
    assert frame[frame.metric == "loss"].step.tolist() == [13100, 13200, 14100, 14200, 14100, 14200]
    assert frame[frame.metric == "eval_ppl"].value.tolist() == [3.63, 3.52, 3.51]
    # the rate is the training rows' alone: a held-out row's copy of it would be a second rate at its step
    assert len(frame[frame.metric == "learning_rate"]) == 6


def test_a_dict_of_split_row_lists_without_a_loss_is_no_history(tmp_path):
    # a data set's splits of examples ({"train": [{"text", "label"}], "test": [...]}) open the same way
    _dump(tmp_path, "dataset.json", {"train": [{"text": "bonjour", "label": 1, "id": 3}] * 4,
                                     "test": [{"text": "merci", "label": 0, "id": 9}] * 2})
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def _iteration(i, total, value):
    # DidulaThavisha_alpha_llm's logs/training_log.json: an AlphaZero iteration, its three training records nested
    return {"iteration": i, "time_seconds": 11481.06, "num_problems": 5, "supervised_ratio": 0.8,
            "replay_buffer_stats": {"size": 232, "wins": 61, "win_rate": 0.2629},
            "self_play_avg_win_rate": 0.0, "self_play_avg_reward": -0.8079,
            "training_losses": [{"policy_loss": 0.0, "value_loss": value, "total_loss": total, "steps": 116 * i}] * 3,
            "eval_win_rate": 0.0, "eval_wins": 0, "eval_total": 5}


def test_a_list_of_iterations_with_nested_training_records_reads_their_total_loss(tmp_path):
    path = _dump(tmp_path, "training_log.json", [_iteration(i, 2.0 / i, 1.0 / i) for i in (1, 2, 3, 4)])
    assert discover(tmp_path).json_histories == [path]
    frame = json_history.read(path).frame
    expected = [2.0] * 3 + [1.0] * 3 + [2 / 3] * 3 + [0.5] * 3
    assert frame[frame.metric == "loss"].value.tolist() == pytest.approx(expected)


def test_nested_training_records_nan_from_the_first_record_are_a_broken_run(tmp_path):
    (tmp_path / "logs").mkdir()
    text = json.dumps([_iteration(i, math.nan, math.nan) for i in (1, 2, 3, 4)], indent=2)
    (tmp_path / "logs" / "training_log.json").write_text(text)  # json writes NaN as the bare word, as Python did
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert analysis.first_incident.kind == "nonfinite_metric"


def test_a_list_of_results_with_nested_lists_without_a_loss_is_no_history(tmp_path):
    # a sweep's results, each with a nested list of per-task scores: no record names a loss
    _dump(tmp_path, "results.json", [{"run": i, "tasks": [{"name": "arc", "acc": 0.4 + i / 100}]} for i in range(4)])
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def _steps_of(path, metric):
    frame = json_history.read(path).frame
    return frame[frame.metric == metric].step.tolist()


def test_a_test_split_beside_the_validation_split_does_not_replace_it(tmp_path):
    # review probe p2 (session 29): {"train", "val", "test"} read the test rows as the held-out curve
    split = dict(_SPLIT_ROWS, test=[{"step": 14200, "epoch": 4, "val_loss": 9.9}])
    path = _dump(tmp_path, "training_log.json", split)
    frame = json_history.read(path).frame
    assert frame[frame.metric == "eval_loss"].value.tolist() == [1.2893, 1.2573, 1.2564]


def test_split_rows_with_epochs_and_no_steps_place_each_evaluation_after_its_epochs_training(tmp_path):
    # review probe p2 (session 29): rows with only an epoch put every held-out row at the last training row's step
    train = [{"epoch": e, "loss": round(2.0 - 0.15 * e, 4)} for e in range(1, 11)]
    val = [{"epoch": e, "loss": round(1.9 - 0.05 * e, 4)} for e in range(1, 11)]
    path = _dump(tmp_path, "training_log.json", {"train": train, "val": val})
    assert _steps_of(path, "eval_loss") == _steps_of(path, "loss") == list(range(1, 11))


def test_held_out_rows_that_are_not_dicts_are_skipped_not_a_crash(tmp_path):
    # review probe p6 (session 29): a non-dict held-out row after the 50th raised AttributeError in analyze
    val = [{"step": 10 * i, "val_loss": 1.2} for i in range(1, 51)] + [None, "x"]
    train = [{"step": 10 * i, "loss": 1.5 - i / 100} for i in range(1, 51)]
    path = _dump(tmp_path, "training_log.json", {"train": train, "val": val})
    forensics.analyze(tmp_path, check_checkpoints=False)
    assert len(_series(path, "eval_loss")) == 50


@pytest.mark.parametrize("value", [
    {"probs": [0.31, 0.82, 0.44], "labels": [0, 1, 1], "losses": [0.37, 0.2, 0.82]},  # a per-sample eval output
    {"test": [0.1], "val": [0.1], "train": [0.8]}],  # a data split's ratios
    ids=["per_sample_eval", "split_ratios"])
def test_number_lists_before_a_loss_list_that_no_training_history_opens_with_are_no_history(tmp_path, value):
    # review probe p10 (session 29): only Keras-like names (val_*, accuracy, a rate, a counter) may come first
    _dump(tmp_path, "predictions.json", value)
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_nested_records_own_cumulative_steps_count_is_their_step(tmp_path):
    # review item 8 (session 29): DidulaThavisha's `steps` (116 an iteration, cumulative) was read as a metric and
    # the records numbered 1, 2, 3 ...
    path = _dump(tmp_path, "training_log.json", [_iteration(i, 2.0 / i, 1.0 / i) for i in (1, 2, 3, 4)])
    assert sorted(_series(path, "loss")) == [116, 232, 348, 464]
    assert "steps" not in set(json_history.read(path).frame.metric)


def test_nested_records_steps_that_restart_each_iteration_are_no_step(tmp_path):
    # guard: a count that starts again in each iteration (10, 20, 30 every time) says no place in the run
    entries = [dict(_iteration(i, 2.0 / i, 1.0 / i), training_losses=[
        {"total_loss": 2.0 / i, "steps": 10 * k} for k in (1, 2, 3)]) for i in (1, 2, 3, 4)]
    path = _dump(tmp_path, "training_log.json", entries)
    assert len(_series(path, "loss")) == 12


def test_nested_records_with_the_same_steps_count_in_every_record_are_no_step(tmp_path):
    # review 29b: a constant count (100 steps an iteration, in every record) never falls, but read as the step it
    # would pile the whole history onto step 100
    entries = [dict(_iteration(i, 2.0 / i, 1.0 / i), training_losses=[
        {"total_loss": 2.0 / i + k / 100, "steps": 100} for k in (1, 2, 3)]) for i in (1, 2, 3, 4)]
    path = _dump(tmp_path, "training_log.json", entries)
    assert len(_series(path, "loss")) == 12
