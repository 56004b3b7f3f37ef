"""Reader of a long ("tidy") metric table: one row per metric per step, the metric named in a column of its own
(MLflow's metric history, `key,value,timestamp,step`; TensorBoard's get_scalars() frame, `run,tag,step,value`; an
export written as `Name,Value,Timestamp,Step`: AS119, giganticode_rafael-experiments). The header's roles are
`table_headers.long_table_columns`'; `csv_metrics.read` hands such a file here.

`read(path, text, warnings)` returns one LogRecords (format "csv"): each row's value at its step under the
timeline's name of its metric (named together, as a tracker's tags are: `train_loss` beside `valid_loss` is the loss),
wall time from the time column (milliseconds, as MLflow keeps it, or seconds). A step column named `epoch` is
numbered from 1 as in a wide table (the epochs done). Rows are put in the order they were logged: by time, or without
a time column each metric's rows as the file holds them, a step that goes back starting a later attempt. Rows whose
step or value cannot be read are left out with a warning (a `nan` value is data, kept).

Not a training log, raising UnreadableFile: a table where no metric is named for a loss (a dataset or price table in
the same columns), and one that holds several runs (TensorBoard's frame of an experiment): their rows at one step
are different runs', not one run's metrics.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from ..metric_names import names_a_loss, tracker_metric_names
from ..table_headers import long_table_columns
from ..timeline import LogRecords
from ._filetime import file_mtime

FORMAT = "csv"
_MS_SINCE_EPOCH = 1e11  # a time past this is in milliseconds (1e11 s is the year 5138; 1e11 ms is 1973)


def read(path: Path, text: str, warnings: list[str]) -> LogRecords:
    """The table's rows as the timeline's series (module docstring); `text` is the file's, decoded, `warnings` what
    the caller found already."""
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    header, rows = (rows[0], rows[1:]) if rows else ([], [])
    roles = long_table_columns(header)
    if roles is None:
        raise UnreadableFile(path, "the header is not a long metric table's (a name, a value and a step column)")
    width = max(roles.values()) + 1
    table = pd.DataFrame([row[:width] for row in rows if len(row) >= width],
                         columns=range(width)).astype(str) if rows else pd.DataFrame(columns=range(width))
    _one_run(table, roles, path)
    keys = table[roles["name"]].str.strip()
    names = dict(zip(sorted(set(keys)), tracker_metric_names(sorted(set(keys)))))
    if not names_a_loss(names.values()):
        raise UnreadableFile(path, "a long table (a name, a value and a step column) where no name is a loss; "
                                   "not a training log")
    steps = _steps(table[roles["step"]])
    values = pd.to_numeric(table[roles["value"]].str.strip(), errors="coerce")
    written_nan = table[roles["value"]].str.strip().str.lower().isin({"nan", "-nan", "inf", "-inf", "+inf"})
    keep = steps.notna() & (values.notna() | written_nan)
    if (~keep).sum() + (len(rows) - len(table)):
        warnings.append(f"{int((~keep).sum()) + len(rows) - len(table)} rows without a readable step and value; "
                        "skipped")
    epochs = header[roles["step"]].strip().lower() == "epoch"
    if epochs and keep.any():
        steps = steps - steps[keep].min() + 1  # numbered from 1, whichever epoch the script counts from
    frame = pd.DataFrame({"step": steps[keep].astype("int64"), "metric": keys[keep].map(names),
                          "value": values[keep].astype("float64"), "wall_time": _seconds(table, roles)[keep]})
    if epochs:  # the epoch a metric of its own, as a wide table's epoch column is
        epoch_rows = frame.drop_duplicates("step")
        frame = pd.concat([frame, epoch_rows.assign(metric="epoch", value=epoch_rows["step"].astype("float64"))],
                          ignore_index=True)
    # each metric's rows in file order; where one's step goes back, a later attempt: kept after the one before
    attempt = frame.groupby("metric", sort=False)["step"].transform(lambda s: (s.diff() < 0).cumsum())
    order = ["wall_time", "step"] if "time" in roles else ["attempt", "step"]
    frame = (frame.assign(attempt=attempt).sort_values(order, kind="stable", na_position="last")
             .drop(columns="attempt").reset_index(drop=True))
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta={"rows": int(keep.sum())},
                      mtime=file_mtime(path), warnings=tuple(warnings))


def _one_run(table: pd.DataFrame, roles: dict[str, int], path: Path) -> None:
    """Raises UnreadableFile where the run column names more than one run."""
    if "run" in roles and table[roles["run"]].str.strip().nunique() > 1:
        raise UnreadableFile(path, "a long metric table of several runs; their rows at one step are not one run's")


def _steps(cells: pd.Series) -> pd.Series:
    """The cells as whole numbers at or above 0 (NaN where a cell is none)."""
    raw = pd.to_numeric(cells.str.strip(), errors="coerce")
    return raw.where(np.isfinite(raw) & (raw == np.floor(raw)) & (raw >= 0))


def _seconds(table: pd.DataFrame, roles: dict[str, int]) -> pd.Series:
    """Each row's wall time in seconds since the epoch (NaN without a time column)."""
    if "time" not in roles:
        return pd.Series(np.nan, index=table.index)
    stamps = pd.to_numeric(table[roles["time"]].str.strip(), errors="coerce")
    return stamps / 1000.0 if float(stamps.median()) > _MS_SINCE_EPOCH else stamps
