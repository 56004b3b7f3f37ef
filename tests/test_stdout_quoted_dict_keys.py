"""Tests of the console reader (ingest/stdout.py): printed dict keys that hold quotes.

A printed HF dict is read key by key as Python wrote it: a quoted key is one key, whatever it holds.

The HF Trainer's ProgressCallback prints `str(logs)`; a metric whose name holds quotes or brackets
(a custom `compute_metrics` key such as `acc("val")`) is printed as a Python string literal, and the
reader must not cut a second, bogus metric out of it.
"""
from __future__ import annotations

from forensics.ingest import stdout


def _console(tmp_path, extra_key: str | None):
    lines = []
    for i in range(1, 21):
        logs = {"loss": round(3.0 - 0.1 * i, 4), "grad_norm": 1.0, "learning_rate": 1e-4}
        if extra_key is not None:
            logs[extra_key] = 0.5
        logs["epoch"] = round(i / 20, 2)
        lines.append(str(logs))  # what ProgressCallback.on_log prints
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return stdout.read(path).frame


def test_a_key_holding_quotes_and_brackets_stays_one_metric(tmp_path):
    key = 'acc("val")</b>'
    frame = _console(tmp_path, key)
    assert set(frame["metric"]) - {"epoch"} == {"loss", "grad_norm", "learning_rate", key}  # no piece of the key
    assert frame.loc[frame["metric"] == key, "value"].tolist() == [0.5] * 20


def test_a_key_with_an_apostrophe_is_read_whole(tmp_path):
    key = "it's_acc"  # Python prints it in double quotes
    frame = _console(tmp_path, key)
    assert frame.loc[frame["metric"] == key, "value"].tolist() == [0.5] * 20


def test_plain_dict_lines_read_as_before(tmp_path):
    frame = _console(tmp_path, None)
    assert {"loss", "grad_norm", "learning_rate"} <= set(frame["metric"])
    assert frame.loc[frame["metric"] == "loss", "value"].tolist() == [round(3.0 - 0.1 * i, 4) for i in range(1, 21)]
