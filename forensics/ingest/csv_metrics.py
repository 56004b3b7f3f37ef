"""Reader of CSV metric tables: Lightning's CSVLogger `metrics.csv` (LitGPT's fine-tuning and pre-training write it
by default, `out/.../logs/csv/version_0/metrics.csv`), and a script's own table with a step or epoch column, comma-
or tab-separated (`step<TAB>loss` in a train.log).

`read(path)` returns one LogRecords (format "csv"): every numeric cell at its row's step. The step is the first of
`step`, `global_step`, `iteration`, `iter` the header names; a table with only an `epoch` column is one row an
epoch, numbered 1, 2, ... (the epochs done when it was written). Lightning writes train and validation rows apart,
with the other row's cells empty: an empty cell is no value. Names as the rest of the tool has them (`val_loss` ->
eval_loss, `lr-AdamW` -> learning_rate); a table's `train_loss` (or Lightning's `train_loss_step`) is the loss at that
row, not the HF Trainer's closing average of that name, and `*_epoch` columns (Lightning's epoch means) are left out.
A cut last row (a run still writing) is dropped with a warning; a table with no step or loss column raises
UnreadableFile.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import UnreadableFile
from ..metric_names import TABLE_STEP_COLUMNS, is_metrics_table_header
from ..timeline import LogRecords, canonical_metric
from ._filetime import file_mtime
from ._jsonlines import int_step, records_frame

FORMAT = "csv"
_ROW_LOSS = {"train_loss": "loss", "train_loss_step": "loss", "val_loss_step": "eval_loss"}


def read(path: Path) -> LogRecords:
    """The numeric cells of every row at the row's step (module docstring)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UnreadableFile(path, f"not UTF-8 text (byte {err.start}); not a CSV metrics table") from None
    first_line = text[:text.find("\n")] if "\n" in text else text
    delimiter = "\t" if "\t" in first_line and "," not in first_line else ","  # a tab-separated table too
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    if not rows or not is_metrics_table_header(rows[0]):
        raise UnreadableFile(path, "no step (or epoch) column and loss column in its header; not a metrics table")
    header = [h.strip() for h in rows[0]]
    body, warnings = _whole_rows(rows[1:], len(header), text.endswith("\n"))
    lowered = [h.lower() for h in header]
    step_col = next((lowered.index(c) for c in TABLE_STEP_COLUMNS if c in lowered), None)
    epoch_col = lowered.index("epoch") if "epoch" in lowered else None
    entries = _entries(header, body, step_col if step_col is not None else epoch_col)
    if step_col is None:  # one row an epoch: numbered from 1, whichever epoch the script counts from
        first = min((s for s, _ in entries), default=0)
        entries = [(s - first + 1, {**e, "epoch": s - first + 1}) for s, e in entries]
    if not entries:
        raise UnreadableFile(path, "no row with a step; not a metrics table")
    return LogRecords(source=str(path), format=FORMAT, frame=records_frame(entries), meta={"rows": len(entries)},
                      mtime=file_mtime(path), warnings=tuple(warnings))


def _whole_rows(rows: list[list[str]], width: int, ends_with_newline: bool) -> tuple[list[list[str]], list[str]]:
    """The rows with a cut last one (fewer cells than the header, no newline after it) dropped, and said."""
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if rows and not ends_with_newline and len(rows[-1]) < width:
        return rows[:-1], [f"the last row ({len(rows) + 1} lines in) is cut (the run may still be writing); dropped"]
    return rows, []


def _entries(header: list[str], rows: list[list[str]], step_col: int) -> list[tuple[int, dict]]:
    names = [_name(h) for h in header]
    entries = []
    for row in rows:
        step = int_step(row[step_col].strip()) if step_col < len(row) else None
        if step is None:
            continue
        entry = {}
        for i, cell in enumerate(row):
            if i == step_col or names[i] is None or not cell.strip():
                continue
            try:
                value = float(cell)
            except ValueError:
                continue
            entry[names[i]] = value
        entries.append((step, entry))
    return entries


def _name(column: str) -> str | None:
    """The timeline's name of a column; None for Lightning's per-epoch means (`train_loss_epoch`)."""
    lowered = column.strip().lower()
    if lowered.endswith("_epoch"):
        return None
    if lowered.startswith("lr-"):  # Lightning's LearningRateMonitor: lr-AdamW, lr-AdamW/pg1
        return "learning_rate" if "/" not in lowered else None
    return _ROW_LOSS.get(lowered) or canonical_metric(column.strip())
