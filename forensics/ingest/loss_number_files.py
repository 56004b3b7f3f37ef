"""Reader of a loss file of numbers only, named as one (`losses.txt`, `train_losses.txt`, `val_loss.txt`,
`loss_log.txt`).

What such a file is and how its columns are told apart: `forensics.discover.loss_numbers`. `read(path)` returns one
LogRecords (format "loss_numbers"): each line's losses (and a `step,loss,tok/s,lr` line's learning rate) at the line's
counter where it has one (`1,6.2338` -> step 1; a counter that starts again is a new launch, as the timeline reads any
step that goes back), else at the line's number counted from 1. A train and an evaluation file of one run
(`train_losses.txt` beside `val_losses.txt`, one line per evaluation in each) are each read on their own: the same
counter, or the same line number, puts a line's train and evaluation losses at the same step. Lines of another shape (a
cut last line, a stray word) are left out with a warning.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "val_loss.txt"
>>> _ = path.write_text("1_2.07\\n2_1.55\\n3_1.35\\n")
>>> read(path).frame[["step", "metric", "value"]].values.tolist()
[[1, 'eval_loss', 2.07], [2, 'eval_loss', 1.55], [3, 'eval_loss', 1.35]]
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from ..decoding import decode_text
from ..errors import UnreadableFile
from ..discover.loss_numbers import counted_pairs, listed_numbers, loss_columns, loss_file_split, number_cells
from ..log_attempts import LAUNCH, LAUNCHED_ATTEMPTS, attempt_numbers
from ..timeline import LogRecords
from ._cut_tail import cut_list_note, unsettled_last_line
from ._filetime import file_mtime

FORMAT = "loss_numbers"


def read(path: Path) -> LogRecords:
    """Every line's losses at its step (module docstring). Raises UnreadableFile where the name says no loss or the
    lines are not a loss file's numbers."""
    path = Path(path)
    split = loss_file_split(path.name)
    if split is None:
        raise UnreadableFile(path, "the name says no loss; not read as a file of loss numbers")
    text, _ = decode_text(path.read_bytes())
    pairs = counted_pairs(text)
    if pairs is not None:  # `i: loss | ` after each launch's settings line: the counter is said
        return _launches_read(path, pairs, "eval_loss" if split == "eval" else "loss")
    rows, left_out, cut = _rows_of_one_width(text)
    parts = loss_columns(rows, split) if rows else None
    if parts is None:
        raise UnreadableFile(path, "not one to three numbers a line that tell a counter and losses apart; "
                                   "not read as a file of loss numbers")
    frame = _long_frame(rows, parts)
    warnings = ((cut,) if cut else ()) + ((f"{left_out} lines that are not the file's numbers; skipped",)
                                          if left_out else ())
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta={"rows": len(rows)},
                      mtime=file_mtime(path), warnings=warnings)


def _launches_read(path: Path, pairs: list[tuple[int, str, str]], loss: str) -> LogRecords:
    """`i: loss | ` pairs at their `i`, each launch (a settings line) an attempt of its own even where it counts from
    the step the one before it ended at; every launch is one (`LAUNCHED_ATTEMPTS`), however few points it logged."""
    frame = pd.DataFrame({
        "step": pd.Series([int(counter) for _, counter, _ in pairs], dtype="int64"),
        "metric": pd.Series([loss] * len(pairs), dtype="object"),
        "value": pd.Series([float(value) for _, _, value in pairs], dtype="float64"),
        "wall_time": float("nan"),
        LAUNCH: pd.Series([launch for launch, _, _ in pairs], dtype="int64"),
    })
    meta = {"rows": len(pairs), LAUNCHED_ATTEMPTS: sorted(set(attempt_numbers(frame).tolist()))}
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path))


def _rows_of_one_width(text: str) -> tuple[list[tuple[str, ...]], int, str]:
    """The numeric lines of the width most lines have, how many other non-blank lines were left out, and what was
    cut mid-write ("" where nothing): a list of numbers (`[6.7, 5.9, ...]`) a number a line, one without its closing
    bracket up to its last number a comma follows; a last line with no line end not printed as a line before it
    (`_cut_tail`: a last number that may be `1.2` of a `1.25` being written) left out."""
    listed = listed_numbers(text)
    if listed is not None:
        return listed, 0, "" if text.rstrip().endswith("]") else cut_list_note(len(listed))
    lines = [line for line in text.splitlines() if line.strip()]
    cut = ""
    if unsettled_last_line(text):
        lines.pop()
        cut = "the last line (no line end, not printed as the lines before it) may be cut mid-write; left out"
    cells = [number_cells(line) for line in lines]
    widths = Counter(len(c) for c in cells if c is not None)
    if not widths:
        return [], len(lines), cut
    width = widths.most_common(1)[0][0]
    rows = [c for c in cells if c is not None and len(c) == width]
    return rows, len(lines) - len(rows), cut


def _long_frame(rows: list[tuple[str, ...]], parts: tuple[str, ...]) -> pd.DataFrame:
    """The long frame (step, metric, value, wall_time NaN): each loss (and learning-rate) column at the counter, else
    the line number."""
    at = parts.index("step") if "step" in parts else None
    steps = [int(row[at]) if at is not None else n for n, row in enumerate(rows, start=1)]
    losses = [(i, name) for i, name in enumerate(parts) if name not in ("step", "")]  # "": a column not read
    return pd.DataFrame({
        "step": pd.Series([s for s in steps for _ in losses], dtype="int64"),
        "metric": pd.Series([name for _ in rows for _, name in losses], dtype="object"),
        "value": pd.Series([float(row[i]) for row in rows for i, _ in losses], dtype="float64"),
        "wall_time": float("nan"),
    })
