"""Reader of ms-swift's `logging.jsonl` (FORMATS.md section 7).

`read(path)` returns one LogRecords. The step is only in the string
`"global_step/max_steps": "10/100"` (Megatron-swift: `"iteration": "10/100"`; older releases
wrote a plain `"global_step": 10`). The last line is a summary object holding a copy of
`log_history` (and best_metric, checkpoints): it is not read as metrics, since every entry of it
is already a line of the file; its `global_step`, `best_metric`, `best_model_checkpoint` and
`last_model_checkpoint` go into `meta`. `percentage` ("12.50%"), times and memory are not
metrics; other numbers (loss, grad_norm, token_acc, eval_*, train_runtime, ...) are.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ..timeline import LogRecords
from . import file_mtime
from ._jsonlines import parse_lines, records_frame, step_of_fraction

FORMAT = "swift"
STEP_KEYS = ("global_step/max_steps", "iteration", "global_step", "step")
NOT_METRICS = frozenset(STEP_KEYS + ("percentage", "elapsed_time", "remaining_time", "memory(GiB)",
                                     "train_speed(iter/s)", "train_speed(s/it)"))
SUMMARY_META = ("global_step", "best_metric", "best_model_checkpoint", "last_model_checkpoint")


def read(path: Path) -> LogRecords:
    """The metrics of every log line at its step; the closing summary object only feeds `meta`.

    Raises UnreadableFile when no line carries a step.
    """
    path = Path(path)
    objects, warnings = parse_lines(path)
    meta: dict = {"lines": len(objects)}
    rows, no_step = [], 0
    for obj in objects:
        if "log_history" in obj:  # the closing summary: its history duplicates the lines above
            meta.update({k: obj[k] for k in SUMMARY_META if isinstance(obj.get(k), (int, float, str))})
            continue
        step, total = _step(obj)
        if step is None:
            no_step += 1
            continue
        if total is not None:
            meta["max_steps"] = total
        rows.append((step, obj))
    if not rows:
        raise UnreadableFile(path, "no line has global_step/max_steps or iteration; not an ms-swift logging.jsonl")
    if no_step:
        warnings.append(f"{no_step} lines without a step; skipped")
    if warnings:
        meta["warnings"] = warnings
    return LogRecords(source=str(path), format=FORMAT, frame=records_frame(rows, NOT_METRICS), meta=meta,
                      mtime=file_mtime(path))


def _step(obj: dict) -> tuple[int | None, int | None]:
    for key in STEP_KEYS:
        if key in obj:
            step, total = step_of_fraction(obj[key])
            if step is not None:
                return step, total
    return None, None
