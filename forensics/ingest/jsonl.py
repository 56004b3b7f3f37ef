"""Reader of generic JSON-lines metric logs: one object per line with a step key.

`read(path)` returns one LogRecords: every numeric key of every line (numeric strings too) at
the line's `step` (or `global_step`, `iteration`, `iter`, `"N/M"` strings included). Lines
without a step are skipped with a warning; a file where no line has one raises UnreadableFile. verl's
file logger's `{"step": N, "data": {...}}` lines are read as their data (a null there is a NaN orjson could not write).
A file where no line names a step but each its epoch (the log.txt of DINO, DeiT, MAE, ConvNeXt, MoCo v3 and other Meta
research repositories: `{"train_loss": X, "train_lr": Y, "test_loss": Z, "epoch": N}`, one line an epoch) is read at
its epochs. Where no key is the loss, a `train_` one is (`train_loss`), and a held-out split's (`val_loss`,
`test_loss`) the eval loss, and so an `nll` / `val_nll` (`json_history.with_loss_names`); then one named for how it was
taken (`avg_loss`), and an RL loop's `avg_reward` beside the group it sampled (`taken_names`). An opening config record
(`log_config_record`) is kept for the run's config. Stages of one plan that every record names (`"phase": "phase1"`),
the step counter restarting at each, are counted end to end (`stage_steps`), said in a note.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from ..metric_names import JSON_LINE_EPOCH_KEY, JSON_LINE_STEP_KEYS
from ..timeline import LogRecords
from ._jsonlines import read_jsonl
from .json_history import with_loss_names
from .log_config_record import opening_config
from .stage_steps import stages_end_to_end
from .taken_names import with_taken_names

FORMAT = "jsonl"
STEP_KEYS = JSON_LINE_STEP_KEYS
NOT_METRICS = frozenset(STEP_KEYS + ("total_steps", "max_steps", "percentage", "_timestamp", "_runtime",
                                     "timestamp", "time", "elapsed_time", "remaining_time", "Time"))


def read(path: Path) -> LogRecords:
    """The numeric keys of every line that names its step (see the module docstring). A file named for a held-out
    split (fairseq2's metrics/valid.jsonl beside its train.jsonl) holds evaluation metrics: eval_<name>."""
    stages: list[str] = []  # what `stages_end_to_end` did to the records, for the report
    records = read_jsonl(path, FORMAT, STEP_KEYS, NOT_METRICS, "not a metrics log",
                         unwrap=lambda objects: _staged(_flat(objects), stages), epoch_key=JSON_LINE_EPOCH_KEY)
    if stages:
        records = dataclasses.replace(records, notes=records.notes + tuple(stages))
    texts, meta = opening_config(path)
    if texts:
        records = dataclasses.replace(records, texts={**records.texts, **texts}, meta={**records.meta, **meta})
    if Path(path).stem.lower() not in _HELD_OUT_FILES:
        return records
    names = records.frame["metric"].map(lambda name: name if name.startswith("eval_") else "eval_" + name)
    return dataclasses.replace(records, frame=records.frame.assign(metric=names))


_HELD_OUT_FILES = ("valid", "validation", "eval", "evaluation", "val")


def _flat(objects: list[dict]) -> list[dict]:
    """verl's `{step, data}` lines read (`_step_and_data`), and nested objects flattened with `/` (EasyR1's
    experiment_log.jsonl: `{"step": 3, "actor": {"pg_loss": 0.06}, "critic": {"score": {"mean": 0.1}}}`)."""
    flat = [_flattened(obj) if any(isinstance(v, dict) for v in obj.values()) else obj
            for obj in _step_and_data(objects)]
    return with_taken_names(with_loss_names(flat) or flat)


def _staged(entries: list[dict], notes: list[str]) -> list[dict]:
    """The entries with one plan's stages counted end to end (`stage_steps`), the note saying so added to `notes`."""
    entries, note = stages_end_to_end(entries)
    notes.extend([note] if note else [])
    return entries


def _flattened(obj: dict, prefix: str = "") -> dict:
    out: dict = {}
    for key, value in obj.items():
        if isinstance(value, dict):
            out.update(_flattened(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _step_and_data(objects: list[dict]) -> list[dict]:
    """verl's file logger (verl/utils/tracking.py FileLogger) writes `{"step": N, "data": {name: value}}` lines: their
    metrics. It writes with orjson, which writes a NaN as null, so a metric that was numbers and then null on every
    line to the end went NaN (a metric null only now and then is one not logged at those steps). Other lines as
    they are."""
    if not any(_verl_line(obj) for obj in objects):
        return objects
    rows = [obj["data"] for obj in objects if _verl_line(obj)]
    went_nan = _null_to_the_end(rows)
    flat = iter([{k: math.nan if v is None and i >= went_nan.get(k, math.inf) else v for k, v in row.items()}
                 for i, row in enumerate(rows)])
    return [{"step": obj["step"], **next(flat)} if _verl_line(obj) else obj for obj in objects]


def _verl_line(obj: dict) -> bool:
    return isinstance(obj.get("data"), dict) and set(obj) == {"step", "data"}


def _null_to_the_end(rows: list[dict]) -> dict[str, int]:
    """{metric: the index of the row from which it is null to the end}, for metrics that were numbers before."""
    out: dict[str, int] = {}
    for key in {k for row in rows for k in row}:
        present = [(i, row[key]) for i, row in enumerate(rows) if key in row]
        numbers = [i for i, v in present if v is not None]
        tail = [i for i, v in present if v is None and (not numbers or i > numbers[-1])]
        if numbers and tail:
            out[key] = tail[0]
    return out
