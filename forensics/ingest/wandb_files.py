"""What is left of a W&B run folder without its `.wandb` log: `files/wandb-summary.json` and `files/config.yaml`.

W&B's sender writes both beside the log of an online run (offline runs get them at `wandb sync`):

* `wandb-summary.json`: the last value of every metric (HF's final `train/loss`, `train/grad_norm`,
  `train/global_step`, ...) plus W&B's own `_step`, `_runtime`, `_timestamp` and `_wandb`; read
  as one point at the summary's step (the step metric's last value, else the script's own `iter` / `iteration` /
  `step`, else `_step`).
* `config.yaml`: the config, one top-level key per value: `key:` then an indented `value: <scalar>`
  (and, before W&B 0.17, `desc: null`). A value that is a mapping (`peft_config`, `id2label`) is read
  as the flat {key: scalar} of its leaves (`peft_config` -> {r: 16, peft_type: LORA, ...}); lists and
  W&B's own `_wandb` are left out: PyYAML is not a dependency, and the scalars are what the rules read.

The log, when present, holds all of this and more; `run.discover` lists a folder here only when
it has no `.wandb` file.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UnreadableFile
from ..timeline import LogRecords, TrackerRun, canonical_metric, empty_frame
from ._config_keys import is_number
from ._filetime import file_mtime
from ._jsonfile import read_json_object
from .flat_yaml import yaml_scalar
from .wandb import CONFIG_TEXT, OWN_COUNTER_KEYS, STEP_KEYS

FORMAT = "wandb_summary"
_TOP_KEY = re.compile(r"^([^\s#:][^:]*):\s*$")
_VALUE_LINE = re.compile(r"^\s+value:(?:\s+(.*))?$")
# `        r: 16` under a mapping's `value:`, at any depth (a nested mapping's leaves are gathered flat)
_LEAF_LINE = re.compile(r"^\s+([^\s:#-][^:]*):\s+(\S.*)$")


def read(folder: Path) -> LogRecords:
    """The summary point and the config of a W&B run folder with no `.wandb` log.

    Raises UnreadableFile when neither file can be read.
    """
    folder = Path(folder)
    files = folder / "files" if (folder / "files").is_dir() else folder  # a run folder, or its files/ alone
    summary_path, config_path = files / "wandb-summary.json", files / "config.yaml"
    problems: list[str] = []
    summary = _read_or_note(summary_path, read_json_object, problems)
    config = _read_or_note(config_path, read_config_yaml, problems)
    if summary is None and config is None:
        raise UnreadableFile(folder, "a W&B run folder without a readable .wandb log, wandb-summary.json "
                                     "or config.yaml; " + "; ".join(problems))
    run_folder = folder.parent if files is folder and folder.name == "files" else folder
    run = TrackerRun(kind="wandb", store=str(run_folder.parent), run_id=run_folder.name.rsplit("-", 1)[-1],
                     folder=str(folder), started=_start_time(config_path),
                     ended=float(summary["_timestamp"]) if summary and is_number(summary.get("_timestamp")) else 0.0)
    texts = {f"{CONFIG_TEXT}/{config_path}": json.dumps(config, default=str)} if config else {}
    notes = ("no .wandb log in this W&B run folder: only the summary (the last value of each metric) "
             "and the config were read",)
    return LogRecords(source=str(summary_path if summary is not None else config_path), format=FORMAT,
                      frame=summary_frame(summary or {}), texts=texts, mtime=file_mtime(folder),
                      warnings=tuple(problems), notes=notes, tracker_run=run)


# (each line of the `_wandb` block matched one way only: `[ \t]+.*` would split a line's indent many ways)
_START_TIME = re.compile(r"^_wandb:[ \t]*\r?\n(?:[ \t][^\n]*\n)*?[ \t]+start_time:[ \t]+(\d+(?:\.\d*)?)[ \t]*\r?$",
                         re.MULTILINE)


def _start_time(path: Path) -> float:
    """W&B's own `start_time` (Unix seconds) under config.yaml's `_wandb` key, or 0.0."""
    try:
        m = _START_TIME.search(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return 0.0
    return float(m.group(1)) if m else 0.0


def _read_or_note(path: Path, reader, problems: list[str]) -> Any:
    if not path.exists():
        return None
    try:
        return reader(path)
    except (UnreadableFile, OSError) as err:
        problems.append(f"{path.name}: {getattr(err, 'reason', err)}")
        return None


def summary_frame(summary: dict[str, Any]) -> pd.DataFrame:
    # a script's own counter (nanoGPT's `iter`) before W&B's `_step`, which counts `wandb.log` calls
    step_key = next((k for k in STEP_KEYS + OWN_COUNTER_KEYS + ("_step",) if is_number(summary.get(k))
                     and math.isfinite(summary[k]) and 0 <= summary[k] < 2 ** 53), None)
    if step_key is None:
        return empty_frame()
    step = int(summary[step_key])
    wall = float(summary["_timestamp"]) if is_number(summary.get("_timestamp")) else math.nan
    points = [(canonical_metric(k), float(v)) for k, v in summary.items()
              if is_number(v) and not k.startswith("_") and k not in STEP_KEYS and k != step_key]
    return pd.DataFrame({"step": pd.Series([step] * len(points), dtype="int64"), "metric": [m for m, _ in points],
                         "value": pd.Series([v for _, v in points], dtype="float64"),
                         "wall_time": pd.Series([wall] * len(points), dtype="float64")})


def read_config_yaml(path: Path) -> dict[str, Any]:
    """W&B's `config.yaml` as {key: value} for the keys whose value is a scalar (see the module docstring)."""
    try:
        lines = Path(path).read_bytes().decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise UnreadableFile(path, "not UTF-8 text") from None
    out: dict[str, Any] = {}
    key, nested = None, None
    for line in lines:
        top = _TOP_KEY.match(line)
        if top:
            key, nested = top.group(1).strip().strip("'\""), None
            continue
        value = _VALUE_LINE.match(line)
        if key is not None and value and value.group(1) is not None:
            out[key] = yaml_scalar(value.group(1).strip())
            key = None
        elif key is not None and value and not key.startswith("_"):  # a mapping or a list follows
            nested = out.setdefault(key, {})
        elif nested is not None and (leaf := _LEAF_LINE.match(line)):
            nested[leaf.group(1).strip("'\"")] = yaml_scalar(leaf.group(2).strip())
    out = {k: v for k, v in out.items() if v != {}}  # a list, or W&B's own `_wandb`: left out
    if not out and lines:
        raise UnreadableFile(path, "no 'key:' / 'value: ...' entries: not a W&B config.yaml")
    return out
