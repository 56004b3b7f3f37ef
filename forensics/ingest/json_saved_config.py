"""The evaluation interval a run's saved config states beside its metric-history JSON (json_history places a held-out
list of another length by it; json_list_steps says how).

An own script that saves its settings next to its history (`output/experiment_config.json` beside
`output/training_history.json`, duck3244_text_multi_classification: `{"training": {"eval_steps": 500,
"eval_strategy": "steps", ...}}`): a JSON object in the same folder whose name says config or args, with an
`eval_steps` at its top or one section down. An `eval_strategy` / `evaluation_strategy` other than "steps" beside it
means the interval was not used (the Hugging Face Trainer ignores eval_steps then), so none is stated.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UnreadableFile
from ._jsonfile import read_json_value

_MOST_BYTES = 1_000_000  # a saved config is small; a large JSON beside the history is data, not read for this
_STRATEGY_KEYS = ("eval_strategy", "evaluation_strategy")


def saved_eval_steps(history: Path) -> int | None:
    """The eval_steps a config saved beside `history` states (the first such file by name), or None."""
    for path in sorted(Path(history).parent.glob("*.json")):
        if path.name != Path(history).name and _names_a_config(path.stem) and _small(path):
            every = _eval_steps_in(_config_value(path))
            if every is not None:
                return every
    return None


def _names_a_config(stem: str) -> bool:
    return any(word in stem.lower() for word in ("config", "args"))


def _small(path: Path) -> bool:
    try:
        return path.stat().st_size <= _MOST_BYTES
    except OSError:
        return False


def _config_value(path: Path):
    try:
        return read_json_value(path)
    except (UnreadableFile, OSError):
        return None


def _eval_steps_in(config) -> int | None:
    """eval_steps at a config's top, else in its first section that holds one; None where a strategy beside it is
    not "steps" or the value is no whole number of steps."""
    if not isinstance(config, dict):
        return None
    sections = [config] + [v for v in config.values() if isinstance(v, dict)]
    section = next((s for s in sections if "eval_steps" in s), None)
    if section is None or any(section.get(k, "steps") != "steps" for k in _STRATEGY_KEYS):
        return None
    every = section["eval_steps"]
    return every if type(every) is int and every > 0 else None
