"""Reader of generic JSON-lines metric logs: one object per line with a step key.

`read(path)` returns one LogRecords: every numeric key of every line (numeric strings too) at
the line's `step` (or `global_step`, `iteration`, `iter`, `"N/M"` strings included). Lines
without a step are skipped with a warning; a file where no line has one raises UnreadableFile.
"""
from __future__ import annotations

from pathlib import Path

from ..timeline import LogRecords
from ._jsonlines import read_jsonl

FORMAT = "jsonl"
STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "current_steps")
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "max_steps", "percentage", "_timestamp", "_runtime",
                                     "timestamp", "time", "elapsed_time", "remaining_time"))


def read(path: Path) -> LogRecords:
    """The numeric keys of every line that names its step (see the module docstring)."""
    return read_jsonl(path, FORMAT, STEP_KEYS, NOT_METRICS, "not a metrics log")
