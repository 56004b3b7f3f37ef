"""Shared reading of JSON-lines training logs (LLaMA-Factory, ms-swift, generic JSONL).

`read_jsonl(...)` is the whole reader, told by each format which keys hold the step and which
are bookkeeping; `parse_lines(path)` yields the objects of a .jsonl file; `records_frame(rows)`
turns (step, {key: value}) pairs into the timeline's long frame. Rules shared by the readers:

* a cut last line (a run still being written) is dropped with a warning; a bad line in the
  middle is skipped with a warning; a file with no valid line at all raises UnreadableFile;
* a file two processes wrote at once (each record twice, close together, then interleaved) is
  de-duplicated with one note (`LogRecords.notes`), not read as hundreds of resumes;
* numbers are metrics (bare `NaN`/`Infinity` tokens included, json.dumps writes them);
  strings are metrics only when they are numbers ("0.5", "nan"); times like "0:09:01",
  percentages like "12.50%", lists and objects are not.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from ..timeline import LogRecords, canonical_metric, empty_frame
from ._config_keys import is_number
from ._filetime import file_mtime
from ..decoding import decode_text

MAX_STEP = 2 ** 62  # a step must fit the timeline's int64 column


def parse_lines(path: Path) -> tuple[list[dict], list[str]]:
    """The JSON objects of the file in order, and warnings about lines that were not."""
    text, not_utf8 = decode_text(Path(path).read_bytes())
    lines = text.splitlines()
    objects: list[dict] = []
    bad: list[int] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            bad.append(number)
            continue
        if isinstance(obj, dict):
            objects.append(obj)
        else:
            bad.append(number)
    if not objects:
        encoding = f" ({not_utf8})" if not_utf8 else ""
        raise UnreadableFile(path, f"no JSON object on any line{encoding}; not a JSON-lines log")
    return objects, ([not_utf8] if not_utf8 else []) + _warnings(bad, len(lines), text.endswith("\n"))


def _warnings(bad: list[int], n_lines: int, ends_with_newline: bool) -> list[str]:
    warnings = []
    if bad and bad[-1] == n_lines and not ends_with_newline:
        warnings.append(f"last line ({n_lines}) is cut (the run may still be writing); dropped")
        bad = bad[:-1]
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        warnings.append(f"{len(bad)} lines are not JSON objects (lines {shown}); skipped")
    return warnings


def as_number(value) -> float | None:
    """A metric value: a JSON number, or a string holding one ("0", "nan", "2e-05"); else None."""
    if type(value) is float or type(value) is int:
        return float(value) if abs(value) < 2 ** 1023 or type(value) is float else math.copysign(math.inf, value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def records_frame(rows: Iterable[tuple[int, dict]], skip_keys: frozenset = frozenset()) -> pd.DataFrame:
    """Long frame (step, metric, value, wall_time=NaN) of (step, entry) pairs, in order."""
    steps: list[int] = []
    metrics: list[str] = []
    values: list[float] = []
    names: dict[str, str] = {}
    for step, entry in rows:
        for key, raw in entry.items():
            if key in skip_keys:
                continue
            value = as_number(raw)
            if value is None:
                continue
            name = names.get(key)
            if name is None:
                name = names[key] = canonical_metric(key)
            steps.append(step)
            metrics.append(name)
            values.append(value)
    if not steps:
        return empty_frame()
    return pd.DataFrame({
        "step": np.array(steps, dtype=np.int64),
        "metric": np.array(metrics, dtype=object),
        "value": np.array(values, dtype=np.float64),
        "wall_time": np.full(len(steps), math.nan),
    })


def int_step(value) -> int | None:
    """A step from a JSON value: an int, a whole float, or a numeric string; else None."""
    if type(value) is int:
        return value if abs(value) < MAX_STEP else None
    number = as_number(value) if not isinstance(value, bool) else None
    if number is not None and math.isfinite(number) and number == int(number) and abs(number) < MAX_STEP:
        return int(number)
    return None


def step_of_fraction(value) -> tuple[int | None, int | None]:
    """ms-swift's "10/100" -> (10, 100); anything else -> (None, None)."""
    if isinstance(value, str) and "/" in value:
        done, _, total = value.partition("/")
        return int_step(done), int_step(total)
    return int_step(value), None


# A hook for lines that are not log entries (ms-swift's closing summary): it may fill `meta` and
# returns True when the line is consumed.
LineHook = Callable[[dict, dict], bool]


def read_jsonl(path, fmt: str, step_keys: tuple[str, ...], not_metrics: frozenset, what: str,
               other_line: LineHook | None = None, unwrap: Callable[[list[dict]], list[dict]] | None = None,
               epoch_key: str | None = None) -> LogRecords:
    """One LogRecords: the metrics of every line at the step its first present step key gives.

    `what` ends the error when no line has a step ("... not an ms-swift logging.jsonl"). `meta`
    holds the line count and max_steps (from "N/M" steps or a total_steps key); `warnings` the lines skipped.
    `unwrap` turns a format's own line shapes into flat entries first. `epoch_key`: in a file where no line holds any
    of `step_keys`, the key whose whole number is each line's step (a log written once an epoch), said in a note.
    """

    path = Path(path)
    objects, warnings = parse_lines(path)
    if unwrap is not None:
        objects = unwrap(objects)
    by_epoch = epoch_key is not None and not any(key in obj for obj in objects for key in step_keys)
    step_keys = (epoch_key,) if by_epoch else step_keys
    meta: dict = {"lines": len(objects)}
    rows, no_step, run_total, other_lines = [], 0, None, 0
    for obj in objects:
        if other_line is not None and other_line(obj, meta):
            other_lines += 1
            continue
        step, total = first_step(obj, step_keys)
        if step is None:
            no_step += 1
            continue
        total = total if total is not None else int_step(obj.get("total_steps"))
        if (total is not None and run_total is not None and total != run_total and rows
                and _evaluation_only(obj, not_metrics)):
            # an evaluation's own progress (LLaMA-Factory's closing eval: current_steps 8 of 8 eval batches): it
            # was made at the training step the log had reached, not at step 8 ...
            # ... unless it repeats an earlier evaluation exactly: the same weights evaluated again (the last one's, or
            # the best checkpoint's reloaded by load_best_model_at_end), no new point of the curve
            if _repeated_evaluation(obj, rows) is None:
                rows.append((rows[-1][0], obj))
            continue
        if total is not None:
            meta["max_steps"] = total
            run_total = run_total if run_total is not None else total
        rows.append((step, obj))
    if not rows and other_lines:  # a run that ended before its first logged step writes its summary alone
        note = "the log holds no step's line, only its closing summary: the run ended before it logged a step"
        return LogRecords(source=str(path), format=fmt, frame=records_frame([], not_metrics), meta=meta,
                          mtime=file_mtime(path), notes=(note,), warnings=tuple(warnings))
    if not rows:
        raise UnreadableFile(path, f"no line has a step ({', '.join(step_keys[:3])}); {what}")
    if no_step:
        warnings.append(f"{no_step} lines without a step; skipped")
    rows, notes = _one_writer(rows, not_metrics)
    if by_epoch:
        notes += (f"no line names a step: each line's {epoch_key} is its step ({len(rows)} lines, one an {epoch_key}, "
                  f"{rows[0][0]} to {rows[-1][0]})",)
    return LogRecords(source=str(path), format=fmt, frame=records_frame(rows, not_metrics), meta=meta,
                      mtime=file_mtime(path), notes=notes, warnings=tuple(warnings))


def _repeated_evaluation(obj: dict, rows: list[tuple[int, dict]]) -> int | None:
    """The step of an earlier line whose eval_loss equals this one's to the last digit, or None: no two different
    weights evaluate to the same float, so it is the same checkpoint evaluated again."""
    value = obj.get("eval_loss")
    if not isinstance(value, float):
        return None
    return next((step for step, row in rows if row.get("eval_loss") == value), None)


def _evaluation_only(obj: dict, not_metrics: frozenset) -> bool:
    """A line whose numeric metrics are all an evaluation's (eval_*, predict_*)."""
    names = [k for k, v in obj.items() if k not in not_metrics and is_number(v) and k != "epoch"]
    return bool(names) and all(k.startswith(("eval_", "predict_")) for k in names)


# Two processes appending to one log (each node's local rank 0, or the same job started twice)
# write the same all-reduced record within a few lines of each other; a resume replays records
# only after a whole stretch of later steps. So a copy must follow its original closely.
COPY_WINDOW = 8
MIN_COPY_SHARE = 0.25


def _one_writer(rows: list[tuple[int, dict]], not_metrics: frozenset) -> tuple[list[tuple[int, dict]], tuple[str, ...]]:
    """The rows with the second writer's copies left out, and a note saying so, when the file
    was written by two processes at once (see COPY_WINDOW); else the rows as they are."""
    copies = _copies(rows, not_metrics)
    if len(copies) < 3 or len(copies) < MIN_COPY_SHARE * len(rows):
        return rows, ()
    dropped = set(copies)
    kept = [row for i, row in enumerate(rows) if i not in dropped]
    note = (f"records written twice: {len(copies)} of its {len(rows)} lines repeat one a few lines above "
            f"(same step and values; two processes writing one log, or a logger attached twice); "
            f"one copy of each was kept, not read as resumes")
    return kept, (note,)


def _copies(rows: list[tuple[int, dict]], not_metrics: frozenset) -> list[int]:
    """Indexes of rows that repeat one at most COPY_WINDOW rows above (same step, same metrics)."""
    out = []
    for i, (step, entry) in enumerate(rows):
        before = [e for s, e in rows[max(0, i - COPY_WINDOW):i] if s == step]  # cheap: most rows have none
        if before and _metric_items(entry, not_metrics) in [_metric_items(e, not_metrics) for e in before]:
            out.append(i)
    return out


def _metric_items(entry: dict, not_metrics: frozenset) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in entry.items() if k not in not_metrics))


def first_step(obj: dict, keys: tuple[str, ...]) -> tuple[int | None, int | None]:
    """(step, total) from the first of `keys` that holds a step (an int or an "N/M" string)."""
    for key in keys:
        if key in obj:
            step, total = step_of_fraction(obj[key])
            if step is not None:
                return step, total
    return None, None
