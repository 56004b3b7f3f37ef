"""A training history a script dumped as JSON: `json.dump(trainer.state.log_history, f)` (a bare list of the
Trainer's log dicts, `log_history.json`), or a summary holding such a list under one of `HISTORY_KEYS` (a course
notebook's `dpo_metrics.json`: `{"beta": 0.1, ..., "history": [{"epoch": 0.08, "loss": 0.87, ...}, ...]}`).

Each entry is one log line, read as trainer_state.json's `log_history` is: its `step`, else its place in the list
(the step is then the position, said in the meta). Only an entry's numeric values are metrics.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ..timeline import LogRecords
from ._filetime import file_mtime
from ._jsonfile import read_json_value
from .trainer_state import history_frame

FORMAT = "json_history"
HISTORY_KEYS = ("log_history", "history", "logs", "train_history", "training_history", "metrics")


def history_of(data) -> list | None:
    """The list of log dicts a JSON value holds (itself, or under one of `HISTORY_KEYS`), or None."""
    if isinstance(data, dict):
        data = next((data[k] for k in HISTORY_KEYS if isinstance(data.get(k), list)), None)
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data[:50]):
        return None
    return data if any("loss" in e or "eval_loss" in e for e in data[:200]) else None


def read(path: Path) -> LogRecords:
    """The entries of a dumped history as timeline rows; UnreadableFile where the file holds no such list."""
    path = Path(path)
    history = history_of(read_json_value(path))
    if history is None:
        raise UnreadableFile(path, "no list of log entries with a loss (a dumped log_history) in it")
    frame, meta, warnings = history_frame(history, None)
    if "step_inferred" in meta:
        meta["step_inferred"] = f"{len(history)} entries without 'step': numbered by their place in the list"
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=warnings)
