"""Write a Timeline as CSV or Parquet: sources relative to the run folder, NaN told apart from "not logged".

In every table a logged NaN is written `nan` (and infinities `inf` / `-inf`), while a value that
was never logged is left empty (CSV) or null (Parquet): in the wide table a metric not logged at
a step, in the long table a point without a wall time. Paths in `source` are relative to the run
folder, so a table moved to another machine still says which file a point came from.

With pyarrow installed (the `export` extra) both formats are written by Arrow's C++ writers,
which is what keeps an export of a million points in the time of reading them; without it CSV
falls back to pandas and Parquet is unavailable.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.arrays import FloatingArray

from .errors import BadOption
from .findings import text_columns
from .timeline import Timeline


def sources_root(path) -> Path:
    """The folder the table's `source` paths are written relative to: the run folder, or the folder of the one log
    file given."""
    return Path(path).resolve() if Path(path).is_dir() else Path(path).resolve().parent


def timeline_table(timeline: Timeline, root: Path | None = None, wide: bool = False) -> pd.DataFrame:
    """The table that gets written: long (one row per point) or wide (step x metric), values nullable.

    Values are pandas' nullable Float64: NaN is a value, <NA> means "not logged".

    >>> from forensics.timeline import LogRecords, build_timeline
    >>> frame = pd.DataFrame({"step": [10, 20, 20], "metric": ["loss", "loss", "grad_norm"],
    ...                       "value": [2.5, float("nan"), 1.0], "wall_time": float("nan")})
    >>> t = build_timeline([LogRecords("/run/trainer_state.json", "trainer_state", frame)])
    >>> timeline_table(t, wide=True)["grad_norm"].tolist()
    [<NA>, 1.0]
    >>> timeline_table(t, root=Path("/run"))["source"].unique().tolist()
    ['trainer_state.json']
    """
    if wide:
        return _wide(timeline)
    frame = timeline.frame
    # Text columns as categoricals: a few distinct strings over a million rows, written as dictionaries.
    codes, sources = pd.factorize(frame["source"])
    relative = pd.Categorical.from_codes(codes, categories=[_relative(s, root) for s in sources])
    wall = frame["wall_time"].to_numpy(dtype="float64")
    return pd.DataFrame({
        "step": frame["step"].to_numpy(),
        "metric": pd.Categorical(frame["metric"]),
        "value": _nullable(frame["value"].to_numpy(dtype="float64"), np.zeros(len(frame), bool)),
        "source": relative,
        "format": pd.Categorical(frame["format"]),
        "wall_time": _nullable(wall, np.isnan(wall)),
        "segment": frame["segment"].to_numpy(),
        "abandoned": frame["abandoned"].to_numpy(),
    })


def _wide(timeline: Timeline) -> pd.DataFrame:
    rows = timeline.final()
    if rows.empty:
        return pd.DataFrame({"step": pd.Series(dtype="int64")})
    values = rows.pivot(index="step", columns="metric", values="value").sort_index()
    logged = rows.assign(_one=True).pivot(index="step", columns="metric", values="_one").reindex_like(values)
    out = {"step": values.index.to_numpy()}
    for metric in values.columns:
        col = values[metric].to_numpy(dtype="float64")
        out[metric] = _nullable(col, logged[metric].isna().to_numpy())
    return pd.DataFrame(out)


def _nullable(values: np.ndarray, missing: np.ndarray) -> FloatingArray:
    """Float64 values where NaN stays a value and only `missing` is <NA> (pd.array would fold NaN into NA)."""
    return FloatingArray(np.ascontiguousarray(values, dtype="float64"), np.asarray(missing, dtype=bool))


def _relative(source: str, root: Path | None) -> str:
    if root is None:
        return source
    try:
        return os.path.relpath(source, root)
    except ValueError:  # another drive on Windows: keep it whole
        return source


def write_table(table: pd.DataFrame, path: Path, fmt: str) -> None:
    """Write `table` as "csv" or "parquet"; NaN as `nan`, missing as empty (CSV) or null (Parquet)."""
    if fmt == "parquet":
        require_pyarrow("--parquet")
        import pyarrow.parquet as pq

        # through a handle we opened: given a path, pyarrow deletes it when the write fails (a full disk), and a
        # path it deletes may be what was there before (a previous export, or a device such as /dev/full)
        with open(path, "wb") as handle:
            pq.write_table(_arrow(table), handle)
    elif _has_pyarrow():
        import pyarrow.csv as pacsv

        # Booleans as pandas writes them (True/False), so a CSV reads the same with or without pyarrow.
        as_text = {c: pd.Categorical.from_codes(table[c].to_numpy().astype("int8"), categories=["False", "True"])
                   for c in table.columns if table[c].dtype == bool}
        pacsv.write_csv(_arrow(table.assign(**as_text)), path)
    else:
        _pandas_csv(table, path)


def write_stats_csv(stats: pd.DataFrame, path: Path) -> None:
    """Write a checkpoint's per-tensor stats (`scan_table`) as CSV, where "nan" only ever marks a number that is NaN:
    a missing text cell (a tensor outside every block, no note) is written empty."""
    _text_cells_blank(stats).to_csv(path, index=False, na_rep="nan")


def _text_cells_blank(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{c: frame[c].astype(object).where(frame[c].notna(), "") for c in text_columns(frame)})


def _arrow(table: pd.DataFrame):
    import pyarrow as pa

    # from_pandas keeps NaN inside a Float64 column as NaN (a value) and <NA> as null.
    return pa.Table.from_pandas(table, preserve_index=False)


def _pandas_csv(table: pd.DataFrame, path: Path) -> None:
    out = table.copy()
    for name in out.columns:
        if isinstance(out[name].dtype, pd.Float64Dtype):
            col = out[name]
            missing = col.isna().to_numpy()  # <NA>: not logged (a NaN value is not NA here)
            raw = col.array._data
            text = np.where(np.isnan(raw), "nan", raw.astype(str)).astype(object)
            text[missing] = ""
            out[name] = text
    out.to_csv(path, index=False, na_rep="")


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def require_pyarrow(option: str) -> None:
    if not _has_pyarrow():
        raise BadOption(f"{option} needs pyarrow: pip install 'forensics[export]'")
