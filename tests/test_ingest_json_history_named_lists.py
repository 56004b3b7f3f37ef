"""Tests of ingest.json_history: metric-history JSON files of named number lists and logger series.

Corpus batch AS71 found metric-history JSON files left unread or misread: a dict of parallel number lists under a
name without 'loss' (ConnorLathrop_Pytorch_with_tinyshakespeare_example's history.json), a training list named
`epoch_losses` (JFan5_microgpt-torch), `train_steps` / `valid_losses` / `valid_steps` (BMIHALKO_tiny-transformer-final),
an own logger's {metric: [{step, value}]} series (Shivay00001_shivacon-ai) and a bare list in `valid_losses.json` read
as a second training loss (jyuno426_sym-math)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory, UnreadableFile
from forensics.ingest import json_history


def _dump(folder, name, value):
    (folder / name).write_text(json.dumps(value, indent=2))
    return folder / name


def _series(path, metric):
    frame = json_history.read(path).frame
    return frame[frame.metric == metric].set_index("step")["value"].to_dict()


_FALLING = [2.71, 2.44, 2.28, 2.14, 2.05, 1.97, 1.90, 1.85, 1.80, 1.76]


def test_a_dict_of_train_and_val_number_lists_under_any_name_is_found_and_read(tmp_path):
    _dump(tmp_path, "history.json", {"train": _FALLING, "val": [v - 0.1 for v in _FALLING]})
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy"
    assert analysis.timeline.series("eval_loss").to_dict()[10] == pytest.approx(1.66)


def test_a_dict_of_whole_numbers_under_train_is_no_history(tmp_path):
    # a data split's indices ({"train": [0, 3, 5, ...]}) open like a history of parallel lists, but not with a fraction
    _dump(tmp_path, "splits.json", {"train": list(range(0, 60, 3)), "val": [1, 2, 4]})
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_the_only_list_named_losses_is_the_training_loss(tmp_path):
    path = _dump(tmp_path, "training_losses.json", {"epoch_losses": _FALLING, "elapsed_seconds": 337.6})
    assert _series(path, "loss") == dict(zip(range(1, 11), _FALLING))


def test_two_lists_named_losses_without_a_split_name_say_no_training_loss(tmp_path):
    path = _dump(tmp_path, "losses.json", {"epoch_losses": _FALLING, "batch_losses": _FALLING})
    with pytest.raises(UnreadableFile):
        json_history.read(path)


@pytest.mark.parametrize("held_out", ["evaluation_losses", "valLosses_loss", "dev2_loss"])
def test_a_list_named_for_a_held_out_split_as_a_loss_file_is_named_is_no_training_loss(tmp_path, held_out):
    # the held-out words of a loss file's name (loss_numbers.loss_stem_split) tell a key's split too: a second list of
    # them missed `evaluation`, a split glued to `losses` (valLosses) and a digit glued to the word (dev2)
    path = _dump(tmp_path, "losses.json", {held_out: _FALLING, "elapsed_seconds": 337.6})
    with pytest.raises(UnreadableFile):
        json_history.read(path)


def test_a_held_out_list_with_its_own_steps_is_placed_at_them(tmp_path):
    path = _dump(tmp_path, "loss_log.json", {"train_steps": [100 * i for i in range(1, 9)], "train_losses": _FALLING[:8],
                                             "valid_steps": [400, 800], "valid_losses": [2.3, 1.9]})
    assert list(_series(path, "loss")) == [100, 200, 300, 400, 500, 600, 700, 800]
    assert _series(path, "eval_loss") == {400: 2.3, 800: 1.9}


def test_a_held_out_step_between_the_training_steps_gets_an_entry_of_its_own(tmp_path):
    path = _dump(tmp_path, "loss_log.json", {"train_steps": [100, 200, 300], "train_losses": [3.0, 2.5, 2.2],
                                             "valid_steps": [150, 300], "valid_losses": [2.8, 2.1]})
    assert _series(path, "eval_loss") == {150: 2.8, 300: 2.1}
    assert list(_series(path, "loss")) == [100, 200, 300]


def _point(step, value, epoch=0):
    return {"step": step, "value": value, "timestamp": 1771619045.0 + step, "epoch": epoch}


def test_an_own_loggers_metric_series_are_read_one_entry_a_step(tmp_path):
    _dump(tmp_path, "metrics.json", {
        "train/step_loss": [_point(0, 3.07), _point(20, 2.58), _point(20, 2.54), _point(40, 0.91), _point(40, 0.68)],
        "train/lr": [_point(0, 0.0), _point(20, 4e-4), _point(40, 8e-4)],
        "train/loss": [_point(23, 2.82), _point(46, 1.27, 1)],
        "val/loss": [_point(23, 1.37), _point(46, 0.30, 1)]})
    analysis = forensics.analyze(tmp_path)
    timeline = analysis.timeline
    assert timeline.series("loss").to_dict() == {0: 3.07, 20: 2.54, 40: 0.68}  # a step logged twice: its last value
    assert timeline.series("loss_avg").to_dict() == {23: 2.82, 46: 1.27}  # the epoch mean kept apart
    assert timeline.series("eval_loss").to_dict() == {23: 1.37, 46: 0.30}
    assert timeline.series("learning_rate").to_dict()[40] == pytest.approx(8e-4)
    assert analysis.status == "healthy"


def test_a_bare_list_in_a_file_named_valid_losses_is_the_held_out_loss(tmp_path):
    train = _dump(tmp_path, "train_losses.json", _FALLING * 2)
    valid = _dump(tmp_path, "valid_losses.json", _FALLING[:5])
    assert _series(valid, "eval_loss") == dict(zip(range(1, 6), _FALLING[:5]))
    assert set(json_history.read(valid).frame.metric) == {"eval_loss"}
    assert set(json_history.read(train).frame.metric) == {"loss"}


def test_the_corpus_cases_are_read_with_their_steps_and_held_out_loss():
    case = Path(__file__).parent / "realworld" / "BMIHALKO_tiny-transformer-final" / "loss_log.json"
    assert min(_series(case, "loss")) == 100
    assert len(_series(case, "eval_loss")) == 30


# An own trainer's history of lists of three lengths (duck3244_text_multi_classification, AS109): per-epoch training
# means beside an `epochs` list, a per-step `steps` / `learning_rates` pair, and an eval list every `eval_steps` that
# only the config saved beside it states, the closing evaluation repeating the last one.
_EPOCH_MEANS = [0.279, 0.146, 0.056, 0.0136, 0.0128]
_EVALS = [0.33 - 0.01 * j for j in range(20)] + [0.16, 0.16]  # 21 every 50 steps of 1,050, then the closing repeat


def _three_lengths(folder, evals=_EVALS, config=None):
    path = _dump(folder, "training_history.json", {
        "train_loss": _EPOCH_MEANS, "eval_loss": evals, "learning_rates": [2e-5] * 1050,
        "epochs": [1, 2, 3, 4, 5], "steps": list(range(1, 1051))})
    if config is not None:
        _dump(folder, "experiment_config.json", config)
    return path


_SAVED = {"model": {"num_labels": 10}, "training": {"eval_steps": 50, "eval_strategy": "steps"}}


def test_a_longer_eval_list_goes_at_the_eval_steps_the_saved_config_states(tmp_path):
    path = _three_lengths(tmp_path, config=_SAVED)
    assert _series(path, "eval_loss") == dict(zip(range(50, 1051, 50), _EVALS[:21]))
    assert _series(path, "loss") == dict(zip((210, 420, 630, 840, 1050), _EPOCH_MEANS))  # each at its epoch's end
    assert json_history.read(path).warnings == ()


def test_eval_steps_in_the_history_itself_places_the_eval_list(tmp_path):
    data = json.loads(_three_lengths(tmp_path).read_text())
    path = _dump(tmp_path, "training_history.json", {**data, "eval_steps": 50})
    assert list(_series(path, "eval_loss")) == list(range(50, 1051, 50))


@pytest.mark.parametrize("config, evals", [
    (None, _EVALS),  # nothing says the interval
    ({"training": {"eval_steps": 50, "eval_strategy": "epoch"}}, _EVALS),  # the interval was not used
    (_SAVED, _EVALS[:-1] + [0.15]),  # one more than the interval fits that repeats nothing: an eval at step 0?
    (_SAVED, _EVALS + [0.15, 0.14]),  # more evaluations than the interval fits
])
def test_an_eval_list_of_another_length_whose_steps_cannot_be_told_stays_unread_and_said(tmp_path, config, evals):
    records = json_history.read(_three_lengths(tmp_path, evals, config))
    assert "eval_loss" not in set(records.frame.metric)
    assert any("eval_loss (" in w and "left unread" in w for w in records.warnings)


def test_the_corpus_case_reads_its_eval_list_every_500_steps():
    case = Path(__file__).parent / "realworld" / "duck3244_text_multi_classification" / "output"
    evals = _series(case / "training_history.json", "eval_loss")
    assert list(evals) == list(range(500, 10501, 500))
    assert min(evals, key=evals.get) == 7500  # the best, 0.1439, the judgement's turn
    assert list(_series(case / "training_history.json", "loss")) == [2100, 4200, 6300, 8400, 10500]
