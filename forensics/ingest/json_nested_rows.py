"""Log rows a dumped metric history holds one level down, as json_history's flat list of log entries:

* a dict of row lists by split: `{"train": [{"step": 100, "loss": 1.49, "lr": 3e-4}, ...], "val": [{"step": 200,
  "val_loss": 1.28, "ppl": 3.6}, ...]}` (adityatiwari049_Kaya-SLM's logs/training_log.json). The training rows keep
  their names; a held-out row's metrics are the eval split's (`loss` / `val_loss` -> eval_loss, `ppl` -> eval_ppl)
  and its copy of the rate is left out (the training rows give the rate at that step). The rows stay in each
  split's own order, the training rows first: a script that appends each resumed session to the file logs a step
  again, and the timeline keeps the last value logged at a step (the later session's);
* a list of entries (iterations, epochs) each holding its training records in a list named for losses:
  `[{"iteration": 1, "eval_win_rate": 0.0, "training_losses": [{"policy_loss": 0.0, "value_loss": NaN,
  "total_loss": NaN, "steps": 116}, ...]}, ...]` (DidulaThavisha_alpha_llm's AlphaZero iterations): the records, in
  order, are the log entries.

* entries that hold a split's metrics as a dict (`{"epoch": 2, "train_loss": 0.017, "val_metrics": {"loss":
  0.0126, "macro_f1": 0.9947, ...}}`, Diabloansh_headlineclassifier's per-epoch records under `epochs`): the dict's
  numbers brought up into the entry under the split's names (`split_dicts_flattened`).

Pure functions of the parsed JSON value; json_history names the losses and frames the rows.
"""
from __future__ import annotations

from ._config_keys import is_number
from ..metric_names import JSON_LINE_EPOCH_KEY, JSON_LINE_STEP_KEYS, canonical_metric, is_held_out, \
    is_test_split, keras_metric_name, loss_of_split

_COUNTERS = frozenset(JSON_LINE_STEP_KEYS) | {JSON_LINE_EPOCH_KEY}


def split_rows(data: dict) -> list[dict] | None:
    """The rows of a dict of row lists by split, training rows first (names as the module docstring says), or None
    where no training split's rows name a loss."""
    splits: dict = {}
    for key in sorted(data, key=lambda k: is_test_split(str(k))):  # a validation split before a test one
        if _rows(data[key]):
            splits.setdefault(loss_of_split(str(key)), data[key])
    if not _names_a_loss(splits.get("loss")):
        return None
    rows = [row for row in splits["loss"] if isinstance(row, dict)] + [
        _held_out_row(row) for row in splits.get("eval_loss") or [] if isinstance(row, dict)]
    if any("step" in row for row in rows) or not all(is_number(row.get("epoch")) for row in rows):
        return rows
    return sorted(rows, key=lambda row: row["epoch"])  # no steps: each evaluation after its epoch's training rows


def nested_records(entries: list) -> list[dict] | None:
    """The training records a list of entries holds under a key named for losses (`training_losses`), flattened in
    order; None where the first entry holds no such list of records naming a loss."""
    first = entries[0] if entries and isinstance(entries[0], dict) else {}
    key = next((k for k, v in first.items() if "loss" in str(k).lower() and _rows(v) and _names_a_loss(v)), None)
    if key is None:
        return None
    return _steps_as_step([record for entry in entries if isinstance(entry, dict) and isinstance(entry.get(key), list)
                           for record in entry[key] if isinstance(record, dict)])


def _steps_as_step(records: list[dict]) -> list[dict]:
    """The records with their own `steps` count as the step where it reads as one: a whole number in every record,
    never falling and growing over the run (DidulaThavisha_alpha_llm's cumulative 116, 210, ...), and no usual step
    key beside it; else as they are (a count that restarts each iteration, or the same count in every record, a
    per-iteration size, is no step)."""
    counts = [record.get("steps") for record in records]
    if any(key in record for record in records for key in JSON_LINE_STEP_KEYS) \
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in counts) \
            or any(later < earlier for earlier, later in zip(counts, counts[1:])) or len(set(counts)) < 2:
        return records
    return [{("step" if key == "steps" else key): value for key, value in record.items()} for record in records]


# What a key adds to a split's name when it holds that split's metrics as a dict (`val_metrics`)
_SPLIT_DICT_SUFFIXES = ("", "_metrics", "_results", "_stats")


def split_dicts_flattened(entries: list) -> list:
    """The entries with each dict of one split's metrics (`"val_metrics": {"loss": 0.0126, "accuracy": 0.99, ...}`,
    `"eval": {...}`) brought up into the entry: a held-out split's under the eval split's names (loss -> eval_loss,
    accuracy -> eval_accuracy), a training split's under its own names where the entry has no loss of its own (a
    training set's evaluation beside the epoch's own `train_loss` is left out); only numeric values, never over a key
    the entry has (Diabloansh_headlineclassifier's per-epoch records)."""
    return [_flattened(e) if isinstance(e, dict) else e for e in entries]


def _flattened(entry: dict) -> dict:
    out = {k: v for k, v in entry.items() if not (isinstance(v, dict) and _split_of(str(k)))}
    own_loss = any("loss" in str(k).lower() and is_number(v) for k, v in entry.items())
    for key, value in sorted(entry.items(), key=lambda kv: is_test_split(str(kv[0]))):  # validation before test
        split = _split_of(str(key)) if isinstance(value, dict) else None
        if split is None or split == "loss" and own_loss:
            continue
        for name, number in value.items():
            name = _flat_name(str(name), held_out=split == "eval_loss")
            if is_number(number) and name not in out:
                out[name] = number
    return out


def _flat_name(name: str, held_out: bool) -> str:
    """A split dict's metric as the entry names it: a held-out `loss` as `val_loss` (the name `with_loss_names` reads
    beside a `train_loss`, where an `eval_loss` would stop it), its other metrics in the eval split's names."""
    if not held_out:
        return canonical_metric(name)
    return "val_loss" if canonical_metric(name) == "loss" else _held_out_name(name)


def _split_of(key: str) -> str | None:
    """The loss a key's split says (`val_metrics` -> eval_loss, `train` -> loss), or None."""
    low = key.lower()
    return next((loss_of_split(low[:len(low) - len(s)]) for s in _SPLIT_DICT_SUFFIXES[::-1]
                 if low.endswith(s) and loss_of_split(low[:len(low) - len(s)])), None)


def _rows(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(row, dict) for row in value[:50])


def _names_a_loss(rows) -> bool:
    """Whether the first rows of a list hold a key named a loss (`loss`, `val_loss`, `total_loss`)."""
    return bool(rows) and any("loss" in str(key).lower() for row in rows[:50] for key in row)


def _held_out_row(row: dict) -> dict:
    named = {}
    for key, value in row.items():
        if key in _COUNTERS:
            named[key] = value
        elif canonical_metric(str(key)) != "learning_rate":
            named[_held_out_name(str(key))] = value
    return named


def _held_out_name(key: str) -> str:
    """A held-out row's metric in the eval split's name: `val_loss` and `loss` -> eval_loss, `ppl` -> eval_ppl."""
    if is_held_out(key):
        return keras_metric_name(key) if key.startswith("val_") else canonical_metric(key)
    return "eval_" + canonical_metric(key)
