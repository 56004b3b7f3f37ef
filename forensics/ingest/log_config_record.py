"""A metrics log's own record of the run's configuration, the JSON-lines object a script writes before its steps
(czhou578_train-gpt2's out/metrics.jsonl: `{"event": "run_start", "config": {nanoGPT's globals: init_from,
block_size, dtype, ...}, "num_params": 123587328}`). Its `config` is read as a tracker's copy of the config is
(`tracker_config.tracker_config_values`: nanoGPT's `dtype` is its autocast precision, `init_from: scratch` a model
trained whole), and a whole-model count beside it as a console's (`console_n_params`). Only the file's first object,
with no step of its own: a record in mid-log is a later launch's or a step's, not the run's start.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..metric_names import JSON_LINE_STEP_KEYS

CONFIG_RECORD_TEXT = "log_config"  # texts key `log_config/<file>`: run_config reads it as a tracker's config
_COUNT_KEYS = ("num_params", "n_params", "num_parameters", "total_params")
_LONGEST_LINE = 1 << 20  # a first line longer than this is no config record


def opening_config(path: Path) -> tuple[dict[str, str], dict]:
    """(texts, meta) of a JSON-lines log's opening config record (module docstring); ({}, {}) where there is none."""
    record = _first_object(Path(path))
    config = record.get("config") if record is not None else None
    if not isinstance(config, dict) or any(key in record for key in JSON_LINE_STEP_KEYS):
        return {}, {}
    texts = {f"{CONFIG_RECORD_TEXT}/{path}": json.dumps(config, default=str)}
    key = next((k for k in _COUNT_KEYS if _is_count(record.get(k))), None)
    meta = {"console_n_params": record[key], "console_n_params_line": f"{key}: {record[key]:,}"} if key else {}
    return texts, meta


def _first_object(path: Path) -> dict | None:
    try:
        with open(path, "rb") as fh:
            line = fh.readline(_LONGEST_LINE)
        record = json.loads(line.decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _is_count(value) -> bool:
    return type(value) is int and value > 0
