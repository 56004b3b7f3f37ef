"""Reader of MLflow's SQL store in a SQLite file (`sqlite:///mlflow.db`), without mlflow.

Opened read-only (`file:...?mode=ro`, so not even a journal is written beside it) through the
standard library's sqlite3. The tables read (mlflow/store/tracking/dbmodels/models.py in
github.com/mlflow/mlflow; the same columns in every schema version since 1.x):

    runs(run_uuid, name, status, start_time, lifecycle_stage, experiment_id)
    experiments(experiment_id, name)
    metrics(key, value, timestamp, step, is_nan, run_uuid)   one row per logged point
    params(key, value, run_uuid)
    tags(key, value, run_uuid)                               mlflow.runName, for runs without a name

The SQL store cannot hold NaN or Inf in a FLOAT column: it writes NaN as value 0 with is_nan = 1,
and +/-Inf as +/-1.7976931348623157e308, the largest double (`SqlAlchemyStore.sanitize_metric_value`).
Both are read back as what was logged: NaN, and +/-Inf for a value at the largest double.

`read_all(path)` returns one LogRecords per run (a run deleted in MLflow has status "deleted"); a SQLite file without
MLflow's tables returns an empty list (it is some other program's database).
"""
from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..errors import UnreadableFile
from ..timeline import LogRecords, TrackerRun
from ._filetime import file_mtime
from .mlflow_store import run_records, status_of

_DOUBLE_MAX = 1.7976931348623157e308
_TABLES = {"runs", "metrics", "params", "experiments"}
SQLITE_MAGIC = b"SQLite format 3\x00"


def read_all(path: Path) -> list[LogRecords]:
    """Every run in the store (see the module docstring). Raises UnreadableFile when SQLite cannot read it."""
    path = Path(path)
    try:
        with _open_read_only(path) as db:
            if not _TABLES <= _tables(db):
                return []
            return [_run(db, path, row) for row in db.execute(
                "SELECT r.run_uuid, r.name, r.status, r.lifecycle_stage, e.name FROM runs r LEFT JOIN experiments e "
                "ON r.experiment_id = e.experiment_id ORDER BY r.start_time, r.run_uuid").fetchall()]
    except sqlite3.Error as err:
        raise UnreadableFile(path, f"SQLite cannot read it ({err}); not an MLflow store, or damaged") from None


class _open_read_only:
    """A read-only connection, closed on exit (sqlite3's own context manager only commits)."""

    def __init__(self, path: Path):
        self.db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)

    def __enter__(self) -> sqlite3.Connection:
        return self.db

    def __exit__(self, *exc) -> None:
        self.db.close()


def _tables(db: sqlite3.Connection) -> set[str]:
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _run(db: sqlite3.Connection, path: Path, row: tuple) -> LogRecords:
    run_id, name, status, stage, experiment = row
    if not name:
        tag = db.execute("SELECT value FROM tags WHERE run_uuid = ? AND key = 'mlflow.runName'", (run_id,)).fetchone()
        name = tag[0] if tag else ""
    metrics = [(int(ts), key, _logged_value(value, is_nan), int(step)) for key, value, ts, step, is_nan in db.execute(
        "SELECT key, value, timestamp, step, is_nan FROM metrics WHERE run_uuid = ?", (run_id,))]
    params = dict(db.execute("SELECT key, value FROM params WHERE run_uuid = ?", (run_id,)).fetchall())
    run = TrackerRun(kind="mlflow", store=str(path), run_id=str(run_id), name=str(name or ""),
                     experiment=str(experiment or ""), status="deleted" if stage == "deleted" else status_of(status))
    return run_records(metrics, params, run, source=f"{path}#{run_id}", mtime=file_mtime(path))


def _logged_value(value: float, is_nan) -> float:
    if is_nan:
        return math.nan
    value = float(value)
    return math.copysign(math.inf, value) if abs(value) >= _DOUBLE_MAX else value
