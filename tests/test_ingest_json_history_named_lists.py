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
