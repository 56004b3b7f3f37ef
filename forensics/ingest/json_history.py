"""A training history a script dumped as JSON, in the shapes scripts write it:

* a list of log dicts: `json.dump(trainer.state.log_history, f)` (`log_history.json`), bare or under one of
  `HISTORY_KEYS` in a summary (a course notebook's `dpo_metrics.json`: `{"beta": 0.1, "history": [{"epoch": 0.08,
  "loss": 0.87, ...}, ...]}`); a history with no `loss` key names its training loss `train_loss` / `training_loss`
  and its held-out one `dev_loss` / `val_loss` / `valid_loss` / `test_loss`; or the same list printed into a text
  file as a Python literal (`pprint(trainer.state.log_history)` in a .txt, read by `_python_literal`);
* a dict of parallel lists: `{"steps": [...], "train": [...], "val": [...]}`, `{"train": [...], "val": [...]}`;
* Ludwig's training_statistics.json (ludwig/api.py:545-555): split -> output feature or `combined` -> metric -> one
  value per evaluation period (`evaluation_frequency`: an epoch, or a number of steps); `training` / `combined` /
  `loss` is the loss and `validation` / `combined` / `loss` the held-out loss, numbered by period;
* where the file's name says it holds losses (`loss_history.json`, `losses.json`): a bare list of numbers (one loss
  a step) or of `[step, train, val]` rows.

Each entry is one log line, read as trainer_state.json's `log_history` is: its `step`, else its place in the list
(said in the meta). A held-out list shorter than the training one (an evaluation every k steps) is placed at the
end of each of its intervals. Only numeric values are metrics.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ..timeline import LogRecords, canonical_metric
from ._filetime import file_mtime
from ._jsonfile import read_json_value
from ._python_literal import read_python_literal
from .trainer_state import history_frame

FORMAT = "json_history"
HISTORY_KEYS = ("log_history", "history", "logs", "train_history", "training_history", "metrics")
_TRAIN_NAMES = ("loss", "losses", "train", "train_loss", "train_losses", "training_loss", "training_losses",
                "train_step_loss")  # llama-cookbook's metrics_data_*.json (train_utils.py save_to_json)
_HELD_OUT_NAMES = ("val", "val_loss", "val_losses", "valid", "valid_loss", "validation", "validation_loss", "dev",
                   "dev_loss", "eval", "eval_loss", "eval_losses", "test", "test_loss", "test_losses")
_STEP_NAMES = ("step", "steps", "iteration", "iterations", "iter", "iters", "global_step")
_RATE_NAMES = ("lr", "lrs", "learning_rate", "learning_rates")


def history_of(data, says_loss: bool = False) -> list[dict] | None:
    """The log entries a JSON value holds in any of the shapes of the module docstring, or None. `says_loss`: the
    file's name says it holds losses, which lets a bare list of numbers or of rows be read as them."""
    if isinstance(data, dict) and _ludwig_loss(data, "training") is not None:
        return _ludwig_entries(data)
    if isinstance(data, dict):
        nested = next((data[k] for k in HISTORY_KEYS if isinstance(data.get(k), list)), None)
        data = nested if nested is not None else _columns_as_entries(data)
    if not isinstance(data, list) or not data:
        return None
    if all(isinstance(e, dict) for e in data[:50]):
        return with_loss_names(data)
    if says_loss and all(_is_number(v) for v in data[:50]):
        return [{"loss": v} for v in data if _is_number(v)]
    if says_loss and all(isinstance(r, list) and len(r) in (2, 3) and all(map(_is_number, r)) for r in data[:50]):
        names = ("step", "loss", "eval_loss")
        return [dict(zip(names, row)) for row in data if isinstance(row, list)]
    return None


def read(path: Path) -> LogRecords:
    """The entries of a dumped history as timeline rows; UnreadableFile where the file holds no such history."""
    path = Path(path)
    history = history_of(_dumped_value(path), says_loss="loss" in path.name.lower())
    if history is None:
        raise UnreadableFile(path, "no list of log entries with a loss (a dumped training history) in it")
    frame, meta, warnings = history_frame(history, None)
    if _trainer_written(history):
        meta["trainer_history"] = "the Hugging Face Trainer's log_history (its log dicts with step and epoch)"
    if "step_inferred" in meta:
        meta["step_inferred"] = f"{len(history)} entries without 'step': numbered by their place in the list"
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=warnings)


# The closing record Trainer.train() logs (speed_metrics' names and train_loss), and the keys Trainer.log() puts in
# every training record of log_history (the dict its ProgressCallback prints has no `step`)
_TRAIN_SUMMARY_KEYS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss"}
_TRAINER_RECORD_KEYS = {"loss", "grad_norm", "learning_rate", "epoch", "step"}


def _trainer_written(history: list[dict]) -> bool:
    """Whether a history is the Hugging Face Trainer's log_history: its closing summary, or its training records."""
    return any(_TRAIN_SUMMARY_KEYS <= e.keys() or _TRAINER_RECORD_KEYS <= e.keys() for e in history
               if isinstance(e, dict))


def _dumped_value(path: Path):
    """The value a history file holds: JSON, or in a text file that is not JSON one Python literal (a history
    pprint'ed into a .txt, NguyenTuoc2807_Financial-Numerical-Reasoning)."""
    try:
        return read_json_value(path)
    except UnreadableFile:
        if path.suffix.lower() == ".json":
            raise
    return read_python_literal(path)


def with_loss_names(entries: list) -> list[dict] | None:
    """The entries, a `train_loss` / `dev_loss` / `test_loss` history renamed to the timeline's loss and eval_loss
    where no key is that already (`train_`: a training metric; `dev_`, `val_`, `test_`: a held-out one); None where
    no entry holds a loss at all."""
    keys = {k for e in entries[:200] if isinstance(e, dict) for k in e}
    if "loss" in keys or "eval_loss" in keys:
        return entries
    names = {canonical_metric(k) for k in keys}
    train = next((k for k in ("train_loss", "training_loss") if k in keys), None) if "loss" not in names else None
    held = next((k for k in _HELD_OUT_NAMES if k.endswith("_loss") and k in keys), None) \
        if "eval_loss" not in names else None
    if train is None and held is None:
        return entries if names & {"loss", "eval_loss"} else None
    rename = {train: "loss", held: "eval_loss"}
    return [{rename.get(k, k): v for k, v in e.items()} for e in entries if isinstance(e, dict)]


def _columns_as_entries(data: dict) -> list[dict] | None:
    """A dict of parallel lists as one entry a step: the training loss's list, with the steps, rates and held-out
    losses that go with it; None where it holds no training loss list."""
    lists = {k.lower(): v for k, v in data.items() if isinstance(v, list) and v and all(map(_is_number, v[:50]))}
    train = next((lists[k] for k in _TRAIN_NAMES if k in lists), None)
    if train is None:
        return None
    steps = next((lists[k] for k in _STEP_NAMES if k in lists and len(lists[k]) == len(train)), None)
    entries = [{"step": steps[i]} if steps else {} for i in range(len(train))]
    for i, value in enumerate(train):
        entries[i]["loss"] = value
    rate = next((lists[k] for k in _RATE_NAMES if k in lists and len(lists[k]) == len(train)), None)
    for i, value in enumerate(rate or []):
        entries[i]["learning_rate"] = value
    held = next((lists[k] for k in _HELD_OUT_NAMES if k in lists and 0 < len(lists[k]) <= len(train)), None)
    for j, value in enumerate(held or []):  # at the end of each of its intervals
        entries[round((j + 1) * len(train) / len(held)) - 1]["eval_loss"] = value
    return entries


def _ludwig_loss(stats: dict, split: str) -> list | None:
    """Ludwig's combined loss of one split (a list of numbers), or None."""
    combined = stats.get(split, {}).get("combined") if isinstance(stats.get(split), dict) else None
    losses = combined.get("loss") if isinstance(combined, dict) else None
    return losses if isinstance(losses, list) and all(map(_is_number, losses[:50])) else None


def _ludwig_entries(stats: dict) -> list[dict]:
    """One entry an evaluation period, at its number: the training loss and the validation loss of that period."""
    entries = [{"step": i, "loss": v} for i, v in enumerate(_ludwig_loss(stats, "training"), 1)]
    for entry, value in zip(entries, _ludwig_loss(stats, "validation") or []):
        entry["eval_loss"] = value
    return entries


def _is_number(value) -> bool:
    return type(value) in (int, float)
