"""A training history a script dumped as JSON, in the shapes scripts write it:

* a list of log dicts: `json.dump(trainer.state.log_history, f)` (`log_history.json`), bare or under one of
  `HISTORY_KEYS` in a summary (a course notebook's `dpo_metrics.json`: `{"beta": 0.1, "history": [{"epoch": 0.08,
  "loss": 0.87, ...}, ...]}`); a history with no `loss` key names its training loss `train_loss` / `training_loss`
  and its held-out one `dev_loss` / `val_loss` / `valid_loss` / `test_loss`; or the same list printed into a text
  file as a Python literal (`pprint(trainer.state.log_history)` in a .txt, read by `_python_literal`);
* a dict of parallel lists: `{"steps": [...], "train": [...], "val": [...]}`, `{"train": [...], "val": [...]}`, the
  training loss under a name of `_TRAIN_NAMES` or, where it is the only such list, any other name ending in `_loss` /
  `_losses` that names no held-out split (`{"epoch_losses": [...]}`, JFan5_microgpt-torch); a held-out list with steps
  of its own (`{"train_steps", "train_losses", "valid_steps", "valid_losses"}`, BMIHALKO_tiny-transformer-final) is
  placed at them;
* an own logger's dict of metric series, each a list of `{"step", "value", ...}` points (`{"train/step_loss": [...],
  "val/loss": [...], "train/lr": [...]}`, Shivay00001_shivacon-ai): one entry a step, a step logged twice keeping its
  last value; a per-step loss beside an epoch-mean `loss` is the loss and the epoch mean loss_avg;
* rows one level down (json_nested_rows): a dict of row lists by split (`{"train": [{"step", "loss"}], "val":
  [{"step", "val_loss"}]}`), a list of iterations each holding its training records (`"training_losses": [...]`),
  per-epoch records under `epochs` whose held-out metrics are a dict of their own (`"val_metrics": {"loss": ...}`);
* Ludwig's training_statistics.json (ludwig/api.py:545-555): split -> output feature or `combined` -> metric -> one
  value per evaluation period (`evaluation_frequency`: an epoch, or a number of steps); `training` / `combined` /
  `loss` is the loss and `validation` / `combined` / `loss` the held-out loss, numbered by period;
* where the file's name says it holds losses (`loss_history.json`, `losses.json`): a bare list of numbers (one loss
  a step) or of `[step, train, val]` rows; a bare list in a file whose name says a held-out split
  (`valid_losses.json` beside `train_losses.json`, jyuno426_sym-math) is the held-out loss.

Each entry is one log line, read as trainer_state.json's `log_history` is: its `step`, else its place in the list
(said in the meta); a step-less history a script appended one training call after another is numbered within its
sessions (`replayed_sessions`: where its epoch list goes back, else where a later stretch re-runs an earlier descent).
A held-out list shorter than the training one (an evaluation every k steps) is placed at the
end of each of its intervals; a longer one at the multiples of the `eval_steps` the file or a config saved beside it
states, and a per-epoch training list beside a per-step `steps` list at its epochs' ends (json_list_steps); a longer
one whose steps cannot be told is left unread and said (a `partly read` note). Only numeric values are metrics.
A file still being written (or whose writer was stopped) is read up to its cut, said in one note: of a list, its
entries before the cut, a number no comma follows dropped (it may be `1.2` of a `1.25`); of a dict of lists, the whole
lists before the cut one, which is left out.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..decoding import decode_text
from ..errors import UnreadableFile
from ..discover.loss_numbers import loss_stem_split
from ..metric_names import NLL_LOSS_NAMES
from ..timeline import LogRecords, canonical_metric
from ._config_keys import is_number
from ._cut_tail import cut_list_note
from ._filetime import file_mtime
from ._jsonfile import read_json_value, values_and_end
from ._python_literal import complete_literal_values, read_python_literal
from .json_list_steps import epoch_end_steps, eval_steps_at_interval, stated_steps, unplaced_note
from .json_saved_config import saved_eval_steps
from .json_nested_rows import nested_records, split_dicts_flattened, split_rows
from .replayed_sessions import counter_restarts, numbered_by_session, replayed_session_starts
from .trainer_state import history_frame

FORMAT = "json_history"
HISTORY_KEYS = ("log_history", "history", "logs", "train_history", "training_history", "metrics")
_TRAIN_NAMES = ("loss", "losses", "train", "train_loss", "train_losses", "training_loss", "training_losses",
                "train_step_loss")  # llama-cookbook's metrics_data_*.json (train_utils.py save_to_json)
_HELD_OUT_NAMES = ("val", "val_loss", "val_losses", "valid", "valid_loss", "validation", "validation_loss", "dev",
                   "dev_loss", "eval", "eval_loss", "eval_losses", "test", "test_loss", "test_losses",
                   "valid_losses", "validation_losses", "dev_losses")  # (BMIHALKO_tiny-transformer-final)
_STEP_NAMES = ("step", "steps", "iteration", "iterations", "iter", "iters", "global_step", "train_steps")
_RATE_NAMES = ("lr", "lrs", "learning_rate", "learning_rates")


def history_of(data, says_loss: bool = False, held_out: bool = False, eval_every=None,
               notes: list | None = None) -> list[dict] | None:
    """The log entries a JSON value holds in any of the shapes of the module docstring, or None. `says_loss`: the
    file's name says it holds losses, which lets a bare list of numbers or of rows be read as them; `held_out`: the
    name says they are a held-out split's (a bare list of numbers is then the eval loss); `eval_every`: the eval_steps
    the run's saved config states; `notes` gets a line for each list left unread."""
    if isinstance(data, dict) and _ludwig_loss(data, "training") is not None:
        return _ludwig_entries(data)
    if isinstance(data, dict):
        nested = next((data[k] for k in HISTORY_KEYS if isinstance(data.get(k), list)), None) or _epoch_records(data)
        data = nested if nested is not None else (_columns_as_entries(data, eval_every, notes) or _series_entries(data)
                                                  or split_rows(data))
    if not isinstance(data, list) or not data:
        return None
    if all(isinstance(e, dict) for e in data[:50]):
        return with_loss_names(split_dicts_flattened(data)) or with_loss_names(nested_records(data) or [])
    if says_loss and all(is_number(v) for v in data[:50]):
        values = [v for v in data if is_number(v)]  # an eval entry without a step would share the one before it
        return [{"step": i, "eval_loss": v} for i, v in enumerate(values, 1)] if held_out else \
            [{"loss": v} for v in values]
    if says_loss and all(isinstance(r, list) and len(r) in (2, 3) and all(map(is_number, r)) for r in data[:50]):
        names = ("step", "loss", "eval_loss")
        return [dict(zip(names, row)) for row in data if isinstance(row, list)]
    return None


def _epoch_records(data: dict) -> list | None:
    """The per-epoch records a summary dict holds under `epochs` (Diabloansh_headlineclassifier: `{"config": {...},
    "epochs": [{"epoch": 1, "train_loss": 0.72, "val_metrics": {...}}, ...]}`); None where `epochs` is no list of
    dicts (a list of epoch numbers beside parallel loss lists is their axis)."""
    records = data.get("epochs")
    return records if isinstance(records, list) and records and all(isinstance(r, dict) for r in records[:50]) \
        else None


def read(path: Path) -> LogRecords:
    """The entries of a dumped history as timeline rows; UnreadableFile where the file holds no such history."""
    path = Path(path)
    notes: list[str] = []
    data = _dumped_value(path, notes)
    history = history_of(data, says_loss="loss" in path.name.lower(), held_out=loss_stem_split(path.stem) == "eval",
                         eval_every=saved_eval_steps(path) if isinstance(data, dict) else None, notes=notes)
    if history is None:
        raise UnreadableFile(path, "no list of log entries with a loss (a dumped training history) in it")
    history, sessions = _by_session(history, _epoch_list(data, len(history)))
    frame, meta, warnings = history_frame(history, None)
    warnings += tuple(notes)
    if sessions:
        meta["replayed_sessions"] = sessions
    if _trainer_written(history):
        meta["trainer_history"] = "the Hugging Face Trainer's log_history (its log dicts with step and epoch)"
    if "step_inferred" in meta:
        meta["step_inferred"] = f"{len(history)} entries without 'step': numbered by their place in the list"
    return LogRecords(source=str(path), format=FORMAT, frame=frame, meta=meta, mtime=file_mtime(path),
                      warnings=warnings)


def _by_session(history: list[dict], epochs: list | None) -> tuple[list[dict], str]:
    """A history without steps, one loss an entry, numbered within the sessions its epoch counter (`epochs`, one an
    entry) or else a re-run's replayed descent tells (`replayed_sessions`): a script that appends each training call's
    fresh history to the file numbers nothing by step, so the timeline would read the sessions as one run. Other
    histories as they are. With what was done, in words ("" where nothing was)."""
    if any("step" in e for e in history if isinstance(e, dict)) \
            or not all(isinstance(e, dict) and "loss" in e for e in history):
        return history, ""
    starts = counter_restarts(epochs) if epochs else []
    how = "their epoch counter goes back"
    if not starts:
        starts = replayed_session_starts([e["loss"] for e in history])
        how = "they begin again where an earlier session began, the same descent point for point"
    if not starts:
        return history, ""
    said = (f"{len(starts) + 1} sessions appended one after another (a training run launched again): at entries "
            f"{', '.join(str(s + 1) for s in starts)} {how}; each numbered from 1, the last one stands")
    return numbered_by_session(history, starts), said


def _epoch_list(data, count: int) -> list | None:
    """The epoch counter of a dict of parallel lists (`epoch` / `epochs`, one value a training entry), or None."""
    if not isinstance(data, dict):
        return None
    lists = {str(k).lower(): v for k, v in data.items() if isinstance(v, list)}
    return next((lists[k] for k in ("epoch", "epochs") if len(lists.get(k) or ()) == count), None)


# The closing record Trainer.train() logs (speed_metrics' names and train_loss), and the keys Trainer.log() puts in
# every training record of log_history (the dict its ProgressCallback prints has no `step`)
_TRAIN_SUMMARY_KEYS = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss"}
_TRAINER_RECORD_KEYS = {"loss", "grad_norm", "learning_rate", "epoch", "step"}


def _trainer_written(history: list[dict]) -> bool:
    """Whether a history is the Hugging Face Trainer's log_history: its closing summary, or its training records."""
    return any(_TRAIN_SUMMARY_KEYS <= e.keys() or _TRAINER_RECORD_KEYS <= e.keys() for e in history
               if isinstance(e, dict))


def _dumped_value(path: Path, notes: list[str]):
    """The value a history file holds: JSON, or in a text file that is not JSON one Python literal (a history
    pprint'ed into a .txt, NguyenTuoc2807_Financial-Numerical-Reasoning); of a list cut before its closing bracket (a
    file still being written, or its writer stopped), the entries before the cut, said in `notes`."""
    try:
        return read_json_value(path)
    except UnreadableFile:
        text, _ = decode_text(path.read_bytes())
        cut = _cut_list_head(text.strip())
        if cut:
            notes.append(cut_list_note(len(cut), "entries" if isinstance(cut[0], dict) else "values"))
            return cut
        lists, cut_key = _cut_dict_head(text.strip())
        if lists:
            notes.append(_cut_dict_note(lists, cut_key))
            return lists
        if path.suffix.lower() == ".json":
            raise
    return read_python_literal(path)


def _cut_dict_head(body: str) -> tuple[dict, str]:
    """Of a JSON dict of lists cut before its closing brace (Keras' `json.dump(history.history, f)` stopped), the
    whole lists before the cut, and the key of the list it cut ("" where it came after the last list); ({}, "") for
    any other file. A cut list is left out, not read in part: its values would be placed along the others' steps as a
    list logged less often."""
    if not body.startswith("{") or body.endswith("}"):
        return {}, ""
    decoder, lists, pos = json.JSONDecoder(), {}, 1
    while True:
        key_at = body.find('"', pos)
        if key_at < 0:
            return (lists, "") if lists and not body[pos:].strip(" \t\r\n,") else ({}, "")
        if body[pos:key_at].strip(" \t\r\n,"):
            return {}, ""  # a dict closed and another begun (dumps appended), or other text: not one dict cut
        key = None
        try:
            key, pos = decoder.raw_decode(body, key_at)
            pos = body.index(":", pos) + 1
            pos += len(body[pos:]) - len(body[pos:].lstrip())
            value, pos = decoder.raw_decode(body, pos)
        except (json.JSONDecodeError, RecursionError, ValueError):
            # the cut fell inside a list, or before one began: in its key, before or after its colon
            cut = body[pos:pos + 1] == "[" and isinstance(key, str) or not any(c in body[key_at:] for c in "[]{}")
            return (lists, key) if cut and lists else ({}, "")
        if not isinstance(key, str) or not isinstance(value, list):
            return {}, ""
        lists[key] = value


def _cut_dict_note(lists: dict, cut_key: str) -> str:
    """The one line a dict of lists cut before its closing brace is read with."""
    left_out = f", '{cut_key}' (cut inside) left out" if cut_key else ""
    return (f"cut off before its closing brace: still being written or interrupted; read the {len(lists)} whole "
            f"lists before the cut{left_out}")


def _cut_list_head(body: str) -> list:
    """The complete entries of a JSON or Python-literal list (`body`, the file's stripped text) that ends before its
    closing bracket; [] for any other file (one that is no list, one whole but broken inside)."""
    if not body.startswith("[") or body.endswith("]"):
        return []
    values, end = values_and_end(body, 1)
    rest = body[end:].lstrip(" \t\r\n,")
    if rest.startswith("]"):
        return []  # closed, with bytes after it (NUL padding, a second list): not cut, and no entry of it cut
    if values and is_number(values[-1]) and "," in rest:
        return complete_literal_values(body)  # JSON stopped before the cut: at a Python `nan` / `inf` (str(list))
    if values and isinstance(values[-1], (int, float)) and not body[end:].lstrip().startswith(","):
        values = values[:-1]  # a number no comma follows may be cut mid-number (`1.2` of a `1.25`)
    return values or complete_literal_values(body)


def with_loss_names(entries: list) -> list[dict] | None:
    """The entries, a `train_loss` / `dev_loss` / `test_loss` history renamed to the timeline's loss and eval_loss
    where no key is that already (`train_`: a training metric; `dev_`, `val_`, `test_`: a held-out one), and so a
    logged `nll` / `val_nll` (metric_names.NLL_LOSS_NAMES); None where no entry holds a loss at all."""
    keys = {k for e in entries if isinstance(e, dict) for k in e}  # all: a held-out key may first come late
    if "loss" in keys or "eval_loss" in keys:
        return entries
    names = {canonical_metric(k) for k in keys}
    train = next((k for k in _SPLIT_TRAIN_LOSSES if k in keys), None) if "loss" not in names else None
    held = next((k for k in _SPLIT_HELD_OUT_LOSSES if k in keys), None) if "eval_loss" not in names else None
    if train is None and held is None:
        return entries if names & {"loss", "eval_loss"} else None
    rename = {train: "loss", held: "eval_loss"}
    return [{rename.get(k, k): v for k, v in e.items()} for e in entries if isinstance(e, dict)]


# The names a history's training and held-out losses go by where no key is `loss` / `eval_loss`: a split's prefix,
# then a logged nll (metric_names.NLL_LOSS_NAMES), then `total_loss`: the sum of the parts logged beside it, the one
# the optimizer minimises (DidulaThavisha_alpha_llm's policy_loss + value_loss)
_SPLIT_TRAIN_LOSSES = ("train_loss", "training_loss") + tuple(
    k for k, v in NLL_LOSS_NAMES.items() if v == "loss") + ("total_loss",)
_SPLIT_HELD_OUT_LOSSES = tuple(k for k in _HELD_OUT_NAMES if k.endswith("_loss")) + tuple(
    k for k, v in NLL_LOSS_NAMES.items() if v == "eval_loss")


def _columns_as_entries(data: dict, eval_every=None, notes: list | None = None) -> list[dict] | None:
    """A dict of parallel lists as one entry a step: the training loss's list, with the steps, rates and held-out
    losses that go with it (lists of other lengths where json_list_steps places them); None where it holds no
    training loss list. `eval_every`: the run's eval_steps where its saved config says it (the dict's own first)."""
    lists = {k.lower(): v for k, v in data.items() if isinstance(v, list) and v and all(map(is_number, v[:50]))}
    train = lists.get(_train_column(lists))
    if train is None:
        return None
    steps, last_step = _step_axis(lists, len(train))
    if steps is None:  # a summary's stated logging interval or length of the run (json_list_steps.stated_steps)
        steps = stated_steps(data.get("logging_steps"), data.get("total_steps"), len(train))
        last_step = steps[-1] if steps else None
    entries = [{"step": steps[i]} if steps else {} for i in range(len(train))]
    for i, value in enumerate(train):
        entries[i]["loss"] = value
    rate = next((lists[k] for k in _RATE_NAMES if k in lists and len(lists[k]) == len(train)), None)
    for i, value in enumerate(rate or []):
        entries[i]["learning_rate"] = value
    held_names = [k for k in _HELD_OUT_NAMES if k in lists]
    held_name = next((k for k in held_names if len(lists[k]) <= len(train)), held_names[0] if held_names else None)
    if held_name is None:
        return entries
    held, held_steps = lists[held_name], lists.get(held_name.split("_")[0] + "_steps")
    if steps and held_steps and len(held_steps) == len(held):
        return _at_their_steps(entries, held, held_steps)
    if len(held) <= len(train):
        for j, value in enumerate(held):  # at the end of each of its intervals
            entries[round((j + 1) * len(train) / len(held)) - 1]["eval_loss"] = value
        return entries
    every = data.get("eval_steps", eval_every)
    at = eval_steps_at_interval(held, every, last_step) if steps else None
    if at is None and notes is not None:
        notes.append(unplaced_note(held_name, len(held), len(train)))
    return entries if at is None else _at_their_steps(entries, held, at)


def _step_axis(lists: dict, count: int) -> tuple[list | None, object]:
    """The steps of the training list's `count` values and the run's last step: a step list of its length, else the
    ends of its epochs where an `epochs` list of its length sits beside a longer per-step list; (None, None) where
    neither is there."""
    steps = next((lists[k] for k in _STEP_NAMES if k in lists and len(lists[k]) == count), None)
    if steps:
        return steps, steps[-1]
    per_step = next((lists[k] for k in _STEP_NAMES if k in lists and len(lists[k]) > count), None)
    epochs = next((lists[k] for k in ("epochs", "epoch") if k in lists and len(lists[k]) == count), None)
    ends = epoch_end_steps(epochs, per_step[-1]) if per_step and epochs else None
    return (ends, ends[-1]) if ends else (None, None)


def _train_column(lists: dict) -> str | None:
    """The name of the training loss's list: one of `_TRAIN_NAMES`, else the only other list named `..._loss` /
    `..._losses` that names no held-out split (`epoch_losses`, JFan5_microgpt-torch's training_losses.json)."""
    named = next((k for k in _TRAIN_NAMES if k in lists), None)
    if named is not None:
        return named
    losses = [k for k in lists if k.endswith(("_loss", "_losses")) and loss_stem_split(k) != "eval"]
    return losses[0] if len(losses) == 1 else None


def _at_their_steps(entries: list[dict], held: list, held_steps: list) -> list[dict]:
    """The training entries with the held-out losses at their own steps (`valid_steps`: an evaluation every 4th
    logged step in BMIHALKO_tiny-transformer-final's loss_log.json), in step order."""
    by_step = {e["step"]: e for e in entries}
    apart = []
    for step, value in zip(held_steps, held):
        if step in by_step:
            by_step[step]["eval_loss"] = value
        else:
            apart.append({"step": step, "eval_loss": value})
    return sorted(entries + apart, key=lambda e: e["step"]) if apart else entries


def _series_entries(data: dict) -> list[dict] | None:
    """An own logger's {metric: [{"step", "value", ...}, ...]} as one entry a step (the last value where a step was
    logged twice: Shivay00001_shivacon-ai's train/step_loss at 20 and 40); None where no list is such points."""
    series = {k: v for k, v in data.items() if isinstance(v, list) and v and all(map(_is_point, v[:50]))}
    if not series:
        return None
    names = {k: canonical_metric(k) for k in series}
    if "step_loss" in names.values():  # the per-step loss; `train/loss` beside it is the epoch's mean
        names = {k: {"step_loss": "loss", "loss": "loss_avg"}.get(n, n) for k, n in names.items()}
    by_step: dict = {}
    for key, points in series.items():
        for point in filter(_is_point, points):
            by_step.setdefault(point["step"], {"step": point["step"]})[names[key]] = point["value"]
    return [by_step[step] for step in sorted(by_step)]


def _is_point(value) -> bool:
    return isinstance(value, dict) and is_number(value.get("step")) and is_number(value.get("value"))


def _ludwig_loss(stats: dict, split: str) -> list | None:
    """Ludwig's combined loss of one split (a list of numbers), or None."""
    combined = stats.get(split, {}).get("combined") if isinstance(stats.get(split), dict) else None
    losses = combined.get("loss") if isinstance(combined, dict) else None
    return losses if isinstance(losses, list) and all(map(is_number, losses[:50])) else None


def _ludwig_entries(stats: dict) -> list[dict]:
    """One entry an evaluation period, at its number: the training loss and the validation loss of that period."""
    entries = [{"step": i, "loss": v} for i, v in enumerate(_ludwig_loss(stats, "training"), 1)]
    for entry, value in zip(entries, _ludwig_loss(stats, "validation") or []):
        entry["eval_loss"] = value
    return entries
