"""Reader of generic JSON-lines metric logs: one object per line with a step key.

`read(path)` returns one LogRecords: every numeric key of every line (numeric strings too) at
the line's `step` (or `global_step`, `iteration`, `iter`, `"N/M"` strings included). Lines
without a step are skipped with a warning; a file where no line has one raises UnreadableFile. verl's
file logger's `{"step": N, "data": {...}}` lines are read as their data (a null there is a NaN orjson could not write).
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from ..timeline import LogRecords
from ._jsonlines import read_jsonl

FORMAT = "jsonl"
STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "current_steps", "Step")  # Step: fairseq2's
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "max_steps", "percentage", "_timestamp", "_runtime",
                                     "timestamp", "time", "elapsed_time", "remaining_time", "Time"))


def read(path: Path) -> LogRecords:
    """The numeric keys of every line that names its step (see the module docstring). A file named for a held-out
    split (fairseq2's metrics/valid.jsonl beside its train.jsonl) holds evaluation metrics: eval_<name>."""
    records = read_jsonl(path, FORMAT, STEP_KEYS, NOT_METRICS, "not a metrics log", unwrap=_step_and_data)
    if Path(path).stem.lower() not in _HELD_OUT_FILES:
        return records
    names = records.frame["metric"].map(lambda name: name if name.startswith("eval_") else "eval_" + name)
    return dataclasses.replace(records, frame=records.frame.assign(metric=names))


_HELD_OUT_FILES = ("valid", "validation", "eval", "evaluation", "val")


def _step_and_data(obj: dict) -> dict:
    """verl's file logger (verl/utils/tracking.py FileLogger) writes `{"step": N, "data": {name: value}}`, with orjson,
    which writes a NaN as null: such a line's metrics, a null read as the NaN it was. Any other line as it is."""
    data = obj.get("data")
    if not isinstance(data, dict) or set(obj) != {"step", "data"}:
        return obj
    return {"step": obj["step"], **{k: math.nan if v is None else v for k, v in data.items()}}
