"""Colab's capture of a `!python train.py` cell: tqdm's bar without its `|...|` block (` 33% 12/36 [00:41<01:23,
3.45s/it]`), and only the bar lines that a newline ended (Colab deletes each redraw that tqdm.write cleared to print a
dict), so the Trainer's step-less dicts stand mostly with no bar before them.

The notebooks are written in tmp_path in nbformat 4's shape, each stream output's text a list of lines as Jupyter
saves it; the steps expected come from how the run was made (its logging interval, its total steps).
"""
from __future__ import annotations

import json
from pathlib import Path

from forensics.ingest import notebook
from forensics.ingest.console_scan import scan
from forensics.ingest.console_steps import training_bar_total


def _dict(step: int, per_epoch: int, loss: float = 1.5) -> str:
    """The Trainer's printed log at `step` of a run making `per_epoch` steps an epoch (its epoch rounded, as 4.x)."""
    return (f"{{'loss': {loss}, 'grad_norm': 0.5, 'learning_rate': {2e-4 * (1 - step / 1000)!r}, "
            f"'epoch': {round(step / per_epoch, 2)}}}\n")


def _bar(n: int, total: int, after: str = "") -> str:
    """A training bar's line as Colab keeps it: no `|` block; `after` the text that ended it on the same line."""
    return f"{round(100 * n / total):3d}% {n}/{total} [00:41<01:23,  3.45s/it]{after}\n"


def _notebook(folder: Path, stream: str) -> Path:
    """A notebook whose one code cell ran `!python train.py` and kept `stream` as its output."""
    cell = {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["!python train.py"],
            "outputs": [{"output_type": "stream", "name": "stdout", "text": stream.splitlines(keepends=True)}]}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}
    path = folder / "train.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _loss_steps(path: Path) -> list[int]:
    frame = notebook.read(path).frame
    return frame.loc[frame["metric"] == "loss", "step"].astype(int).tolist()


def test_a_plain_bar_before_a_dict_dates_it(tmp_path):
    # a bar line that a warning's newline ended at step 20, then the dict logged there (every 10 of 100 steps)
    stream = _bar(20, 100, "`use_cache=True` is incompatible with gradient checkpointing.") + _dict(20, 50)
    assert _loss_steps(_notebook(tmp_path, stream)) == [20]


def test_a_zero_reading_before_a_dict_of_a_later_epoch_does_not_date_it(tmp_path):
    # the bar's first draw (0/36, ended by a warning), one dict logged at step 10 of a 2-epoch 36-step run, then the
    # bar at 12 where the capture ends: the dict sits at most at 12, not at 0
    stream = _bar(0, 36, "`use_cache=True` is incompatible.") + _dict(10, 18) + _bar(12, 36)
    assert _loss_steps(_notebook(tmp_path, stream)) == [12]


def test_a_zero_reading_still_dates_a_first_dict_at_epoch_zero(tmp_path):
    # logging every step: the first dict (epoch 0.0) printed before the bar's redraw to 1, as a log keeps it
    stream = _bar(0, 400, "UserWarning: Input type into Linear4bit is torch.float16") + _dict(1, 200) + _bar(1, 400)
    assert _loss_steps(_notebook(tmp_path, stream))[0] in (0, 1)


def _three_epochs_with_evaluation() -> str:
    """A 3-epoch run of 40 steps an epoch logging every 10, evaluating each epoch: Colab kept the training bar only
    where it stood when a newline ended it (3/120 at the start, each epoch's end), the eval bar's every line."""
    eval_bar = "".join(_bar(n, 5) for n in range(6))
    out = _bar(3, 120, "  warning: padding side")
    for epoch in range(3):
        out += "".join(_dict(step, 40) for step in range(epoch * 40 + 10, epoch * 40 + 41, 10))
        out += _bar(40 * (epoch + 1), 120) + eval_bar + f"{{'eval_loss': 0.9, 'eval_runtime': 1.0, 'epoch': {epoch + 1}.0}}\n"
    return out + "{'train_runtime': 600.0, 'train_samples_per_second': 1.6, 'train_steps_per_second': 0.2, " \
                 "'train_loss': 1.5, 'epoch': 3.0}\n" + _bar(120, 120)


def test_the_training_total_is_the_bar_that_counts_on_not_the_evaluation_bar(tmp_path):
    # the finished eval bar (5/5) stands right before the dicts of epochs 2 and 3, more often than the training bar's
    # reading does; its readings go back to 0 each epoch, the training bar's never
    assert training_bar_total(scan(_three_epochs_with_evaluation())) == 120


def test_dicts_after_evaluation_bars_are_dated_every_ten_steps(tmp_path):
    steps = _loss_steps(_notebook(tmp_path, _three_epochs_with_evaluation()))
    assert steps == list(range(10, 121, 10))


def test_labelled_and_download_bars_are_not_training_bars():
    # a tokenizing bar, a download bar and a labelled one in it/s: none is the Trainer's (it has no description)
    text = ("Map: 100% 500/500 [00:00<00:00, 1363.99 examples/s]\n"
            "model.safetensors: 100% 1.2G/1.2G [00:10<00:00, 120MB/s]\n"
            "Loading checkpoint shards: 100% 2/2 [00:23<00:00, 11.84s/it]\n" + _dict(10, 50))
    assert [e for e in scan(text) if e[0] == "bar"] == []


def test_a_percentage_that_is_not_its_count_is_no_bar():
    assert [e for e in scan(" 10% 5/10 [00:01<00:01,  3.00it/s]\n") if e[0] == "bar"] == []


def _logged(steps, per_epoch: int) -> str:
    return "".join(_dict(step, per_epoch, loss=1.4 + 0.01 * (k % 3)) for k, step in enumerate(steps))


def test_dicts_of_a_kept_tail_are_dated_back_from_the_bar_after_them(tmp_path):
    # a 10-epoch run of 100 steps an epoch logging every 5, saved mid-run: only its dicts of steps 405-450 and the bar
    # at 452 survive; their epochs (4.05 ... 4.5) space them 5 steps apart, the last at most at the reading
    stream = _logged(range(405, 451, 5), 100) + _bar(452, 1000)
    assert _loss_steps(_notebook(tmp_path, stream)) == list(range(407, 453, 5))


def test_a_capture_from_the_start_keeps_its_positions_under_the_bar_after_it(tmp_path):
    # the same run's first dicts (steps 10-50, every 10, 100 an epoch) and the bar at 52: positions x 10 fit their
    # epochs, so they stay where the run's start puts them
    stream = _logged(range(10, 51, 10), 100) + _bar(52, 200)
    assert _loss_steps(_notebook(tmp_path, stream)) == [10, 20, 30, 40, 50]


def test_an_evaluation_bar_after_the_dicts_dates_nothing(tmp_path):
    # the kept tail ends inside an evaluation (12 of 40 batches): read as the training bar it would put 10 dicts
    # 0.05 epoch apart within 12 steps; they stay numbered by their order
    stream = _logged(range(405, 451, 5), 100) + _bar(12, 40)
    assert _loss_steps(_notebook(tmp_path, stream)) == list(range(1, 11))
