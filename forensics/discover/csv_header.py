"""The header of a CSV / TSV file, and whether a folder's `step,value` files are metric series.

A `step,value` file (TensorBoard's per-tag export written by hand, a script's one-metric CSV) says nothing of what
its value is; it is read as a metric series only in a folder where one of them is named for a loss
(metric_names.series_names_a_loss): then every `step,value` file there is one (eval_acc.csv beside train_loss.csv).
The two columns alone are any table's (a schedule, a price series).

A long metric table (one row per metric per step, the metric named in a column: `table_headers.long_table_columns`) is
one where a name in its head or tail names a loss: `name,value,step` alone is any data table's too."""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ..decoding import decode_text
from ..metric_names import names_a_loss, series_names_a_loss, tracker_metric_names
from ..table_headers import is_step_value_header
from .json_hints import SNIFF_BYTES

_CELL = re.compile(r"[,\t]")


def csv_header(path: Path) -> list[str]:
    """The cells of a file's first line (split by `,` or a tab); OSError where it cannot be read."""
    with open(path, "rb") as fh:
        header = fh.readline(SNIFF_BYTES).decode("utf-8-sig", errors="replace")
    return _CELL.split(header.strip())


def folder_holds_a_loss_series(folder: Path, answers: dict[Path, bool]) -> bool:
    """Whether a `step,value` file in `folder` is named for a loss. `answers` holds each folder's answer for one walk
    (the caller's, not this module's: a later walk sees the files as they are then), so that a folder of thousands of
    such files is globbed and read once, not once a file."""
    if folder not in answers:
        answers[folder] = any(_a_loss_series(candidate) for candidate in sorted(folder.glob("*.csv")))
    return answers[folder]


def _a_loss_series(candidate: Path) -> bool:
    # a regular file only: opening a FIFO named train_loss.csv would wait for a writer that never comes
    if not series_names_a_loss(candidate.stem) or not candidate.is_file():
        return False
    try:
        return is_step_value_header(csv_header(candidate))
    except OSError:
        return False


def long_table_names_a_loss(chunk: bytes, name_column: int) -> bool:
    """Whether a metric named in a chunk of a long table (its head or tail) is the training or held-out loss, the
    metrics named together as a tracker's tags are (`train_loss` beside `valid_loss` is the loss). The chunk's first
    line (the header, or a line cut by the tail's start) and its last (cut by the chunk's end) are not read."""
    lines = decode_text(chunk)[0].split("\n")[1:-1]
    names = sorted({row[name_column].strip() for row in csv.reader(io.StringIO("\n".join(lines)))
                    if len(row) > name_column})
    return names_a_loss(tracker_metric_names(names))
