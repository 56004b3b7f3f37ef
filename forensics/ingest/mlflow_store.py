"""What MLflow's two local stores share: one run's metric rows and params -> LogRecords.

MLflow keeps a run's metrics as (key, value, timestamp in ms, step) rows and its params as
strings. The HF Trainer's MLflowCallback logs every `logs` dict with `step=state.global_step`
under the keys it logged (`loss`, `grad_norm`, `learning_rate`, `epoch`, `eval_loss`, ...) and
its TrainingArguments plus the model config as params (values over 250 characters are dropped
by HF). The readers: `mlflow_files` (the `mlruns/` file store), `mlflow_sqlite` (`mlflow.db`).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..metric_names import tracker_metric_names
from ..timeline import LogRecords, TrackerRun, empty_frame

FORMAT = "mlflow"
PARAMS_TEXT = "mlflow_params"

# mlflow/entities/run_status.py: RunStatus RUNNING=1, SCHEDULED=2, FINISHED=3, FAILED=4, KILLED=5
# (the file store writes the number, the SQL store the name).
_STATUS = {1: "running", 2: "running", 3: "finished", 4: "failed", 5: "killed",
           "RUNNING": "running", "SCHEDULED": "running", "FINISHED": "finished", "FAILED": "failed", "KILLED": "killed"}


def status_of(value) -> str:
    """MLflow's run status (a number in meta.yaml, a name in SQL) as TrackerRun.status."""
    return _STATUS.get(value, "unfinished" if value in (None, "") else str(value).lower())


def run_records(rows: list[tuple[int, str, float, int]], params: dict[str, str], run: TrackerRun, source: str,
                mtime: float = math.nan, warnings: tuple[str, ...] = ()) -> LogRecords:
    """LogRecords of one MLflow run.

    Args:
        rows: (timestamp ms, metric key, value, step) in any order; they are put in the order
            they were logged (timestamp, then step), so a run whose step goes back is read as two attempts.
        params: the run's params, as the strings MLflow keeps.
        run: the run (TrackerRun); source: the file or folder the rows came from.
    """
    texts = {f"{PARAMS_TEXT}/{source}": json.dumps(params)} if params else {}
    meta = {"run_id": run.run_id, "run_name": run.name, "status": run.status}
    return LogRecords(source=source, format=FORMAT, frame=_frame(rows), texts=texts, meta=meta, mtime=mtime,
                      warnings=warnings, tracker_run=run)


def _frame(rows: list[tuple[int, str, float, int]]) -> pd.DataFrame:
    if not rows:
        return empty_frame()
    stamps = np.array([r[0] for r in rows], dtype="float64")
    steps = np.array([r[3] for r in rows], dtype="int64")
    order = np.lexsort((steps, stamps))  # stable: equal (timestamp, step) keep their read order
    keys = sorted({r[1] for r in rows})
    names = dict(zip(keys, tracker_metric_names(keys)))
    return pd.DataFrame({
        "step": steps[order],
        "metric": [names[rows[i][1]] for i in order],
        "value": np.array([rows[i][2] for i in order], dtype="float64"),
        "wall_time": stamps[order] / 1000.0,
    })
