"""Reader of Hugging Face `trainer_state.json` (TrainerState.save_to_json, FORMATS.md section 2).

`read(path)` returns one LogRecords: one row per numeric key of every `log_history` entry
(train entries, eval entries, the end-of-run summary whose `train_loss`/`train_runtime` keep
their own names), in file order, steps from each entry's "step" (inferred from the order for very
old files that lack it). `meta` holds the state's own fields (global_step, max_steps,
logging_steps, eval_steps, save_steps, num_train_epochs, train_batch_size,
best_model_checkpoint) where the file has them.

The file is not strict JSON: HF writes bare `NaN`, `Infinity` and `-Infinity`, which Python's
json module reads as floats; they are kept as they are.
"""
from __future__ import annotations

import json
import math
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from ..timeline import LogRecords, canonical_metric, empty_frame
from ._filetime import file_mtime
from ._jsonfile import complete_values, read_json_object
from ._jsonlines import as_number
from ._config_keys import is_number
from ..decoding import decode_text

FORMAT = "trainer_state"
META_KEYS = ("global_step", "max_steps", "logging_steps", "eval_steps", "save_steps", "num_train_epochs",
             "train_batch_size", "best_model_checkpoint", "best_metric", "epoch")


def read(path: Path) -> LogRecords:
    """The log_history of one trainer_state.json as timeline rows (see the module docstring).

    A file cut mid-write is read up to its last complete `log_history` entry, with a warning
    (see `complete_part`). Raises UnreadableFile for a file that is not UTF-8 JSON with at least
    one complete entry, or has no `log_history` list.
    """
    path = Path(path)
    cut_note = None
    decode_notes: list[str] = []
    try:
        state = read_json_object(path, "a trainer_state.json", decode_notes)
    except UnreadableFile:
        state = complete_part(path)
        if state is None:
            raise
        cut_note = _partial_note(path, len(state["log_history"]))
    history = state.get("log_history")
    if history is None:
        history = []
    if not isinstance(history, list):
        raise UnreadableFile(path, "'log_history' is not a list; not a trainer_state.json")
    closing = _closing_evaluation(path.parent, state.get("global_step"), history)
    frame, meta, warnings = history_frame(history + closing, state.get("logging_steps"))
    if closing:
        meta["closing_evaluation"] = (f"{closing[0]['source']}: the evaluation after training, "
                                      f"at step {closing[0]['step']}")
    meta.update({k: state[k] for k in META_KEYS if k in state and _is_plain(state[k])})
    stopped = _training_stopped(state)
    if stopped is not None:
        meta["should_training_stop"] = stopped
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=tuple(decode_notes[:1]) + ((cut_note,) if cut_note else ()) + warnings)


def _partial_note(path: Path, entries: int) -> str:
    """Cut mid-write (the file ends inside its JSON: a run still writing it) or damaged part-way (it ends whole, with
    the object's closing brace, so something before is no JSON: the run is not writing it)."""
    if _ends_whole(path):
        return f"damaged part-way (invalid JSON before its end): read its {entries} complete log_history entries"
    return f"cut mid-write (the run may still be writing it): read its {entries} complete log_history entries"


def _ends_whole(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - 64))
            return fh.read().rstrip(b" \t\r\n\x00").endswith(b"}")  # \x00: a UTF-16 file's high bytes
    except OSError:
        return False


# The Trainer's example scripts (run_clm.py and kin) evaluate once more after `trainer.save_state()`, so that last
# evaluation is in eval_results.json / all_results.json beside the state, not in its log_history
_RESULTS_FILES = ("eval_results.json", "all_results.json")
_NOT_AN_EVALUATION = ("runtime", "samples", "_mem_", "per_second")


def _closing_evaluation(folder: Path, global_step, history: list) -> list[dict]:
    """The evaluation a results file beside the state holds, as one log entry at the state's last step (with
    `source`, dropped as no metric), where the log_history has no evaluation at or after that step; else []."""
    if not isinstance(global_step, int) or global_step <= 0:
        return []
    if any(isinstance(e, dict) and "eval_loss" in e and isinstance(e.get("step"), int) and e["step"] >= global_step
           for e in history):
        return []
    for name in _RESULTS_FILES:
        try:
            results = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(results, dict):
            continue
        evaluation = {k: v for k, v in results.items() if k.startswith("eval_") and is_number(v)
                      and not any(part in k for part in _NOT_AN_EVALUATION)}
        if "eval_loss" in evaluation:
            return [{**evaluation, "step": global_step, "source": name}]
    return []


def complete_part(path: Path) -> dict | None:
    """What a cut trainer_state.json still holds: the fields before `log_history` and every
    complete entry of it; None when not even one entry is complete.

    TrainerState.save_to_json writes `json.dumps(..., indent=2, sort_keys=True)` in one go, so a
    file read while it is written (or left by a killed run) ends part-way; the keys before
    "log_history" (best_*, epoch, eval_steps, global_step, ...) come first in sorted order.
    """
    try:
        text, _ = decode_text(Path(path).read_bytes())  # the note on replaced bytes was taken by the first reading
    except OSError:
        return None
    key = text.find('"log_history"')
    start = text.find("[", key) + 1 if key >= 0 else 0
    if key < 0 or start == 0:
        return None
    entries = complete_values(text, start)
    if not entries:
        return None
    try:
        head = json.loads(text[:key] + '"log_history": []}')
    except (json.JSONDecodeError, RecursionError):
        head = {}
    return {**(head if isinstance(head, dict) else {}), "log_history": entries}


def _training_stopped(state: dict) -> bool | None:
    """The TrainerControl's `should_training_stop` a state saved (transformers 4.38+ keep it under
    `stateful_callbacks`): True in the state saved at the end of training, False in one saved mid-run; None if
    absent."""
    control = (state.get("stateful_callbacks") or {}).get("TrainerControl") if isinstance(
        state.get("stateful_callbacks"), dict) else None
    args = control.get("args") if isinstance(control, dict) else None
    stopped = args.get("should_training_stop") if isinstance(args, dict) else None
    return stopped if isinstance(stopped, bool) else None


def _is_plain(value) -> bool:
    return value is None or isinstance(value, (int, float, str))


def history_frame(history: list, logging_steps) -> tuple[pd.DataFrame, dict, tuple[str, ...]]:
    """All entries at once: keys and values flattened in C (itertools), then numpy masks.

    Per-entry Python work is what makes a 200k-entry history slow, so a Python loop runs only
    for files whose entries lack "step" (very old ones).
    """
    meta: dict = {"entries": len(history)}
    entries = [e for e in history if type(e) is dict]
    warnings = ((f"{len(history) - len(entries)} log_history entries are not objects; skipped",)
                if len(entries) != len(history) else ())
    if not entries:
        return empty_frame(), meta, warnings
    sizes = np.fromiter(map(len, entries), np.int64, len(entries))
    keys = np.fromiter(chain.from_iterable(entries), object, int(sizes.sum()))
    values = np.fromiter(chain.from_iterable(map(dict.values, entries)), object, len(keys))
    types = np.fromiter(map(type, values), object, len(values))
    numeric = (types == float) | (types == int)  # exact types: a bool is not a metric
    _numeric_strings(values, types == str, numeric)
    key_code, key_names = pd.factorize(keys)
    entry_of = np.repeat(np.arange(len(entries)), sizes)
    is_step = numeric & (keys == "step")
    steps, inferred = _entry_steps(entries, entry_of[is_step], _floats(values[is_step]), logging_steps)
    if inferred:
        meta["step_inferred"] = inferred
    keep = numeric & (keys != "step")
    names = np.array([canonical_metric(str(k)) for k in key_names], dtype=object)
    frame = pd.DataFrame({
        "step": steps[entry_of[keep]],
        "metric": names[key_code[keep]],
        "value": _floats(values[keep]),
        "wall_time": np.full(int(keep.sum()), math.nan),
    })
    return frame, meta, warnings


def _numeric_strings(values: np.ndarray, is_string: np.ndarray, numeric: np.ndarray) -> None:
    """Read the strings that hold numbers ("1.23", "nan") as numbers, in place, as the JSON-lines readers do (a
    script that logged str(loss)); other strings stay what they are."""
    at = np.flatnonzero(is_string)
    numbers = [as_number(value) for value in values[at]]
    taken = [(i, n) for i, n in zip(at.tolist(), numbers) if n is not None]
    for i, number in taken:
        values[i] = number
        numeric[i] = True


def _floats(values: np.ndarray) -> np.ndarray:
    """An object array of Python ints and floats as float64 (an int too big for it becomes +-inf)."""
    try:
        return values.astype(np.float64)
    except OverflowError:
        return np.array([float(v) if abs(v) < 2 ** 1023 else math.copysign(math.inf, v) for v in values],
                        dtype=np.float64)


def _entry_steps(entries: list, with_step: np.ndarray, step_values: np.ndarray,
                 logging_steps) -> tuple[np.ndarray, str]:
    """Each entry's step: its own "step", else (very old files) inferred from the order.

    An entry without a whole-number step comes one logging interval after the train entry
    before it; an eval or summary entry shares the step of the entry before it.
    """
    steps = np.zeros(len(entries), dtype=np.int64)
    known = np.zeros(len(entries), dtype=bool)
    whole = np.isfinite(step_values) & (step_values == np.round(step_values)) & (np.abs(step_values) < 2.0 ** 62)
    steps[with_step[whole]] = step_values[whole].astype(np.int64)
    known[with_step[whole]] = True
    if known.all():
        return steps, ""
    every = logging_steps if type(logging_steps) is int and 0 < logging_steps < 2 ** 31 else 1
    last = 0
    for i in np.flatnonzero(~known).tolist():
        last = int(steps[i - 1]) if i else 0
        steps[i] = last + every if _is_train_entry(entries[i]) or i == 0 else last
    missing = int((~known).sum())
    return steps, f"{missing} entries without 'step': position x logging_steps ({every})"


def _is_train_entry(entry: dict) -> bool:
    return "loss" in entry or not any(k.startswith(("eval_", "train_")) for k in entry)
