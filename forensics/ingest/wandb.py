"""Reader of a W&B run log (`wandb/run-<date>-<id>/run-<id>.wandb`, online or offline run).

The `.wandb` file is the full record of a run: W&B writes every `wandb.log` row, every config
update and the run's summary there first, and syncs from it. It is a record log (framing in
`_wandb_log`) of `wandb_internal.Record` protobuf messages; the few messages and fields read here
(field numbers from wandb/proto/wandb_internal.proto in github.com/wandb/wandb) are:

    Record        2 history, 3 summary, 5 config, 12 metric, 17 run, 18 exit
    HistoryRecord 1 item (HistoryItem: 1 key, 2 nested_key, 16 value_json)
    ConfigRecord  1 update, 2 remove (ConfigItem: 1 key, 2 nested_key, 16 value_json)
    RunRecord     1 run_id, 3 project, 4 config, 8 display_name, 17 start_time (1 seconds, 2 nanos)
    MetricRecord  1 name, 2 glob_name, 4 step_metric (what `define_metric` set as the x-axis)
    RunExitRecord 1 exit_code
    Record        4 output, 13 output_raw (OutputRecord / OutputRawRecord: 3 line, the console W&B captured)

so the `wandb` package is not needed (it is large, and its reader is internal API). Older W&B
versions put a history key in `key`, newer ones (wandb-core) in `nested_key`: both are read.

Step: the run's declared step metric (HF's WandbCallback declares `train/global_step` for every
metric), else `train/global_step` / `trainer/global_step` where logged, else the run's own counter
(`iter`, `iteration`, `step`: nanoGPT logs `iter` in each row) where every row carries it, else W&B's
own `_step`, which only counts the rows `wandb.log` was called with.
A row without the step metric takes the last value seen, as W&B's `step_sync` does. Metric names
map as every tracker's do (`train/loss` -> loss, `eval/loss` -> eval_loss; Lightning's WandbLogger's `train_loss`
-> loss where no other loss is logged, `lr-AdamW` -> learning_rate); `_timestamp` is the wall time.

The exit record's code (None: the log has no exit record yet, a run still being written or killed before W&B could
write it) goes to meta `exit_code`; from the captured console, the exception its last traceback ends with
(`console_exception`: `KeyboardInterrupt`, `torch.OutOfMemoryError: ...`) and its last line saying a checkpoint or
model was saved (`console_saved`), which analyzers/tracker_exit.py judges.

The config (the run's hyperparameters: HF logs its TrainingArguments and the model config) goes
to `texts["wandb_config/<path of the log>"]` as JSON, read into RunConfig by `run_config`.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ..errors import UnreadableFile, os_reason
from ..metric_names import tracker_metric_names
from ..discover.run_signs import final_exception
from ..timeline import LogRecords, TrackerRun, empty_frame
from . import _protowire as wire
from ._filetime import file_mtime
from ._wandb_log import check_header, messages

FORMAT = "wandb"
CONFIG_TEXT = "wandb_config"
_HISTORY, _CONFIG, _METRIC, _RUN, _EXIT = 2, 5, 12, 17, 18
_OUTPUTS = (4, 13)  # output (older W&B) and output_raw: the console W&B captured, in the order written
# A line saying the run saved its weights: nanoGPT's `saving checkpoint to out`, the Trainer's `Saving model checkpoint
# to ...`, a script's `Model saved to ...`. The last one seen is what the run kept, as far as its console says.
_SAVED = re.compile(r"(?im)^[^\n]*\bsav(?:e|ed|ing)\b[^\n]*\b(?:checkpoint|model|weights|state_dict)\b[^\n]*$"
                    r"|^[^\n]*\b(?:checkpoint|model|weights)\b[^\n]*\bsaved\b[^\n]*$")
# Keys W&B or HF use as a step counter: the axis, not a metric.
STEP_KEYS = ("train/global_step", "trainer/global_step", "global_step")
# A script's own counter, logged beside its metrics (nanoGPT's `wandb.log({"iter": iter_num, ...})`): the step where
# every row carries it and it never goes back; a counter only some rows carry would date the others by a guess.
OWN_COUNTER_KEYS = ("iter", "iteration", "step")


def read(path: Path) -> LogRecords:
    """One W&B run log as timeline rows, its config as a text, and the run it belongs to.

    Returns LogRecords with format "wandb" and `tracker_run` set; `warnings` says what was
    damaged or cut. Raises UnreadableFile for a file that is not a W&B run log.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UnreadableFile(path, os_reason(err)) from None
    check_header(data, path)
    raw, problems = messages(data)
    log = _decode(raw, problems)
    frame, unplaced = _history_frame(log["history"], _step_key(log))
    if unplaced:
        problems.append(f"{unplaced} history rows logged before the first {_step_key(log)} value; left out")
    run = TrackerRun(kind="wandb", store=str(path.parent.parent), run_id=log["run_id"] or _id_from_name(path),
                     name=log["name"], experiment=log["project"], status=_status(log["exit_code"]),
                     folder=str(path.parent))
    meta = {"run_id": run.run_id, "step_metric": _step_key(log), "exit_code": log["exit_code"],
            **_console_facts("".join(log["console"]))}
    texts = {f"{CONFIG_TEXT}/{path}": json.dumps(log["config"], default=str)} if log["config"] else {}
    return LogRecords(source=str(path), format=FORMAT, frame=frame, texts=texts, meta=meta, mtime=file_mtime(path),
                      warnings=tuple(problems), tracker_run=run)


def _id_from_name(path: Path) -> str:
    """`run-<id>.wandb` -> id (a log cut before its run record still names its run)."""
    stem = path.stem
    return stem[len("run-"):] if stem.startswith("run-") else stem


def _console_facts(console: str) -> dict[str, str]:
    """`console_exception` (the last traceback's exception line) and `console_saved` (the last save line) of the
    console W&B captured, where it shows them."""
    out = {}
    ended = final_exception(console) if "Traceback" in console else None
    if ended:
        out["console_exception"] = ended
    saved = list(_SAVED.finditer(console)) if "sav" in console.lower() else []
    if saved:
        out["console_saved"] = saved[-1].group(0).strip()[:160]
    return out


def _status(exit_code: int | None) -> str:
    if exit_code is None:
        return "unfinished"
    return "finished" if exit_code == 0 else "failed"


# --- protobuf messages -> plain values ----------------------------------------------------------

def _decode(raw: list[bytes], problems: list[str]) -> dict[str, Any]:
    log: dict[str, Any] = {"history": [], "config": {}, "step_metric": None, "run_id": "", "name": "",
                           "project": "", "exit_code": None, "console": []}
    bad = 0
    for message in raw:
        try:
            _take_record(message, log)
        except wire.WireError:
            bad += 1
    if bad:
        problems.append(f"{bad} records are not valid W&B messages; skipped")
    return log


def _take_record(message: bytes, log: dict[str, Any]) -> None:
    for number, _, value in wire.fields(message):
        if not isinstance(value, bytes) and number != _EXIT:
            continue
        if number == _HISTORY:
            log["history"].append(dict(_items(value, item_field=1)))
        elif number == _CONFIG:
            _update_config(log["config"], value)
        elif number == _RUN:
            _take_run(value, log)
        elif number == _METRIC:
            _take_metric(value, log)
        elif number == _EXIT:
            log["exit_code"] = _exit_code(value)
        elif number in _OUTPUTS:
            log["console"].append(_output_line(value))


def _items(message: bytes, item_field: int) -> Iterator[tuple[str, Any]]:
    """(key, value) of each HistoryItem / ConfigItem / SummaryItem under `item_field`."""
    for number, _, item in wire.fields(message):
        if number == item_field and isinstance(item, bytes):
            yield _item(item)


def _item(item: bytes) -> tuple[str, Any]:
    key, nested, value_json = "", [], "null"
    for number, _, value in wire.fields(item):
        if number == 1:
            key = wire.text(value)
        elif number == 2:
            nested.append(wire.text(value))
        elif number == 16:
            value_json = wire.text(value)
    try:
        value = json.loads(value_json)  # W&B writes NaN / Infinity as bare tokens, which json reads
    except (json.JSONDecodeError, RecursionError):
        value = None
    return key or ".".join(nested), value


def _update_config(config: dict[str, Any], message: bytes) -> None:
    for number, _, item in wire.fields(message):
        if number in (1, 2) and isinstance(item, bytes):
            key, value = _item(item)
            if number == 1:
                config[key] = value
            else:
                config.pop(key, None)


def _take_run(message: bytes, log: dict[str, Any]) -> None:
    for number, _, value in wire.fields(message):
        if number == 1:
            log["run_id"] = wire.text(value)
        elif number == 3:
            log["project"] = wire.text(value)
        elif number == 8:
            log["name"] = wire.text(value)
        elif number == 4 and isinstance(value, bytes):
            _update_config(log["config"], value)


def _take_metric(message: bytes, log: dict[str, Any]) -> None:
    """`define_metric("*", step_metric=S)` sets the x-axis of every metric: that S is the step."""
    glob = step = ""
    for number, _, value in wire.fields(message):
        if number == 2:
            glob = wire.text(value)
        elif number == 4:
            step = wire.text(value)
    if glob == "*" and step:
        log["step_metric"] = step


def _output_line(message: bytes) -> str:
    return next((wire.text(value) for number, _, value in wire.fields(message) if number == 3), "")


def _exit_code(message: int | bytes) -> int:
    if not isinstance(message, bytes):
        return 0
    for number, _, value in wire.fields(message):
        if number == 1 and isinstance(value, int):
            return wire.signed(value)
    return 0  # proto3 leaves a zero exit code out


# --- rows -> frame ------------------------------------------------------------------------------

def _step_key(log: dict[str, Any]) -> str:
    if log["step_metric"]:
        return log["step_metric"]
    logged = {k for row in log["history"] for k in row}
    return next((k for k in STEP_KEYS if k in logged), None) or own_counter(log["history"]) or "_step"


def own_counter(history: list[dict[str, Any]]) -> str | None:
    """The first of OWN_COUNTER_KEYS that every history row holding a number logs as a whole number a step may be
    (a row of a table or an image alone needs none), never going back, and never twice for one metric (a `step`
    column that is the epoch repeats on every batch's row: no step counter); None for none."""
    rows = [row for row in history if any(_number(v) is not None for k, v in row.items() if not k.startswith("_"))]
    for key in OWN_COUNTER_KEYS:
        values = [_number(row.get(key)) for row in rows]
        if not values or None in values or not all(_a_step(v) for v in values) \
                or not all(a <= b for a, b in zip(values, values[1:])):
            continue
        seen = [(v, k) for v, row in zip(values, rows) for k in row if k != key and not k.startswith("_")]
        if len(seen) == len(set(seen)):
            return key
    return None


def _a_step(value: float) -> bool:
    return math.isfinite(value) and 0 <= value < 2 ** 53 and value == int(value)


def _history_frame(history: list[dict[str, Any]], step_key: str) -> tuple[pd.DataFrame, int]:
    """Every numeric value of every history row at its step; and how many rows had no step yet."""
    steps, metrics, values, walls = [], [], [], []
    last_step, unplaced = None, 0
    names = _metric_names(history, step_key)
    for row in history:
        step = _number(row.get(step_key))
        if step is not None and math.isfinite(step):
            last_step = int(step)
        if last_step is None:
            unplaced += 1
            continue
        wall = _number(row.get("_timestamp"))
        for key, value in row.items():
            number = _number(value)
            if number is None or key == step_key or key in STEP_KEYS or key.startswith("_"):
                continue
            steps.append(last_step)
            metrics.append(names[key])
            values.append(number)
            walls.append(math.nan if wall is None else wall)
    if not steps:
        return empty_frame(), unplaced
    return pd.DataFrame({"step": pd.Series(steps, dtype="int64"), "metric": metrics,
                         "value": pd.Series(values, dtype="float64"),
                         "wall_time": pd.Series(walls, dtype="float64")}), unplaced


def _metric_names(history: list[dict[str, Any]], step_key: str) -> dict[str, str]:
    """{key: the timeline's name} of every key the run logged, read together as every tracker's tags are
    (`tracker_metric_names`): Lightning's WandbLogger's sole `train_loss` is the loss, its `lr-AdamW` the rate."""
    keys = list(dict.fromkeys(k for row in history for k in row if k != step_key and not k.startswith("_")))
    return dict(zip(keys, tracker_metric_names(keys)))


def _number(value: Any) -> float | None:
    """A logged number as a float (NaN/Inf kept); None for text, tables, images, booleans."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
