"""Discovery of `step,value` CSV files (discover.run): such a file is a metric series only in a folder where one of
them is named for a loss. The answer for a folder is found once a walk: a folder of many such files is not globbed
and read again for each (3,000 files took 20 s), and a loss-named entry that is no regular file (a FIFO) is passed
over, not opened (opening a FIFO blocks until a writer comes)."""
from __future__ import annotations

import builtins
import os
import sys
import threading
from collections import Counter

import pytest

from forensics.discover.run import discover

_SERIES = "step,value\n1,2.0\n2,1.8\n3,1.7\n"


def test_a_fifo_named_for_a_loss_beside_a_step_value_file_is_not_opened(tmp_path):
    if not hasattr(os, "mkfifo") or sys.platform == "win32":
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "train_loss.csv"
    os.mkfifo(fifo)
    (tmp_path / "eval_acc.csv").write_text(_SERIES)
    (tmp_path / "train.log").write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")  # so that the folder is a run
    # a writer waits on the FIFO: where discovery opens it (the fault), it reads a loss series' header and does not
    # hang, so the test fails on the answer below instead of hanging
    writer = threading.Thread(target=_write_a_header_into, args=(fifo,), daemon=True)
    writer.start()
    try:
        assert [p.name for p in discover(tmp_path).csv_logs] == []  # no loss series was read beside eval_acc.csv
    finally:
        # a reader held open until the writer is done lets it go whether it is already waiting in open() or gets
        # there only now (a reader opened and closed at once would leave a late writer waiting for ever)
        released = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(timeout=60)
        os.close(released)


def _write_a_header_into(fifo) -> None:
    try:
        with open(fifo, "w") as fh:
            fh.write(_SERIES)
    except OSError:  # BrokenPipeError: the reader that let it go had already closed
        pass


def test_a_folder_of_many_step_value_files_is_read_once_each(tmp_path, monkeypatch):
    (tmp_path / "train_loss.csv").write_text(_SERIES)
    for i in range(40):
        (tmp_path / f"metric_{i:02d}.csv").write_text(_SERIES)
    opened: Counter = Counter()
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        opened[os.path.basename(str(file))] += 1
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    layout = discover(tmp_path)
    assert len(layout.csv_logs) == 41
    assert all(opened[f"metric_{i:02d}.csv"] == 1 for i in range(40)), opened
    # its own header, the loss-number sniff of its name, and the one look for a loss series in the folder
    assert opened["train_loss.csv"] <= 3, opened


def test_a_folder_with_no_loss_named_series_reads_none_of_its_step_value_files(tmp_path):
    (tmp_path / "prices.csv").write_text(_SERIES)
    (tmp_path / "schedule.csv").write_text(_SERIES)
    (tmp_path / "train.log").write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")
    assert discover(tmp_path).csv_logs == []
