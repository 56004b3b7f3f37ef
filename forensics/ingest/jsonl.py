"""Reader of generic JSON-lines metric logs: one object per line with a step key.

`read(path)` returns one LogRecords: every numeric key of every line (numeric strings too) at
the line's `step` (or `global_step`, `iteration`, `iter`, `"N/M"` strings included). Lines
without a step are skipped with a warning; a file where no line has one raises UnreadableFile.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ..timeline import LogRecords
from . import file_mtime
from ._jsonlines import parse_lines, records_frame, step_of_fraction

FORMAT = "jsonl"
STEP_KEYS = ("step", "global_step", "iteration", "iter", "_step", "current_steps")
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "max_steps", "percentage", "_timestamp", "_runtime",
                                     "timestamp", "time", "elapsed_time", "remaining_time"))


def read(path: Path) -> LogRecords:
    """The numeric keys of every line that names its step (see the module docstring)."""
    path = Path(path)
    objects, warnings = parse_lines(path)
    rows, no_step = [], 0
    for obj in objects:
        step = _step(obj)
        if step is None:
            no_step += 1
        else:
            rows.append((step, obj))
    if not rows:
        raise UnreadableFile(path, f"no line has a step key ({', '.join(STEP_KEYS[:3])}); not a metrics log")
    if no_step:
        warnings.append(f"{no_step} lines without a step; skipped")
    meta = {"lines": len(objects)}
    if warnings:
        meta["warnings"] = warnings
    return LogRecords(source=str(path), format=FORMAT, frame=records_frame(rows, NOT_METRICS), meta=meta,
                      mtime=file_mtime(path))


def _step(obj: dict) -> int | None:
    for key in STEP_KEYS:
        if key in obj:
            step, _ = step_of_fraction(obj[key])
            if step is not None:
                return step
    return None
