"""Reader of LLaMA-Factory's `trainer_log.jsonl` (FORMATS.md section 7).

`read(path)` returns one LogRecords. The classic writer (LogCallback.on_log) puts the step in
`current_steps` and the learning rate in `lr` (`learning_rate` before Nov 2024), writes no
grad_norm, and repeats `current_steps` on eval and summary lines without `loss`. The v1 trainer
writes `step`/`total_steps` with `grad_norm`. Bookkeeping keys (total_steps, percentage, times)
are not metrics. `meta`: max_steps (total_steps), and `warnings` for skipped lines.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ..timeline import LogRecords
from . import file_mtime
from ._jsonlines import int_step, parse_lines, records_frame

FORMAT = "llamafactory"
STEP_KEYS = ("current_steps", "step", "global_step")
# Progress bookkeeping, not training metrics.
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "percentage", "elapsed_time", "remaining_time"))


def read(path: Path) -> LogRecords:
    """The metrics of every line, at its `current_steps` (or v1 `step`).

    Raises UnreadableFile when no line is a JSON object or none carries a step.
    """
    path = Path(path)
    objects, warnings = parse_lines(path)
    rows, no_step = [], 0
    for obj in objects:
        step = next((s for s in (int_step(obj.get(k)) for k in STEP_KEYS) if s is not None), None)
        if step is None:
            no_step += 1
            continue
        rows.append((step, obj))
    if not rows:
        raise UnreadableFile(path, "no line has current_steps or step; not a LLaMA-Factory trainer_log.jsonl")
    if no_step:
        warnings.append(f"{no_step} lines without current_steps/step; skipped")
    meta = {"lines": len(objects)}
    total = next((int_step(o.get("total_steps")) for o in reversed(objects) if "total_steps" in o), None)
    if total is not None:
        meta["max_steps"] = total
    if warnings:
        meta["warnings"] = warnings
    return LogRecords(source=str(path), format=FORMAT, frame=records_frame(rows, NOT_METRICS), meta=meta,
                      mtime=file_mtime(path))
