"""How often a console's run logged, where the run states it: what numbers the Trainer's printed dicts when nothing
in the console (a progress bar, the closing `train_runtime` summary) dates them.

The HF Trainer prints a dict every `logging_steps` optimizer steps (and one at step 1 with `logging_first_step`),
never its step. A run killed before its closing summary, whose bars were not captured, leaves only their order;
its logging interval is stated by:

* the console itself: the printed TrainingArguments (`printed_configs`), the launch command's `--logging_steps`
  (`command_line`);
* a W&B run folder's `files/config.yaml` beside its `files/output.log` (W&B's copy of the console), and
  `wandb-summary.json`'s `train/global_step`, the step of the last dict logged;
* the Trainer's `training_args.bin` in the console's own folder (stdout redirected into the output_dir: `python
  train.py > out/train.log` keeps the dicts, while tqdm's bars go to stderr).

`stated_logging(texts, path)` -> StatedLogging or None.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from . import command_line, printed_configs
from ._jsonfile import read_json_object
from .training_args import read_training_args
from .wandb import STEP_KEYS
from .wandb_files import read_config_yaml

_WANDB_CONSOLE = "output.log"
_SAVED_ARGUMENTS = "training_args.bin"


@dataclass(frozen=True)
class StatedLogging:
    """every: logging_steps (None where only the last step is known); first_step: logging_first_step was on (a dict
    at step 1 before the first interval's); last_step: the step of the last dict logged (W&B's summary), or None;
    source: where it was read, for the reader's note."""
    every: int | None
    first_step: bool
    last_step: int | None
    source: str


def stated_logging(texts: dict[str, str], path: Path) -> StatedLogging | None:
    """The logging interval the console's own arguments state, else its W&B run folder's files (module docstring)."""
    for key, source in ((printed_configs.ARGS_KEY, "the printed TrainingArguments"),
                        (command_line.TEXT_KEY, "the launch command")):
        args = json.loads(texts[key]) if key in texts else {}
        every = _interval(args)
        if every is not None:
            return StatedLogging(every, _is_true(args.get("logging_first_step")), None, source)
    if Path(path).name == _WANDB_CONSOLE:
        return _wandb_folder_logging(Path(path))
    return _saved_arguments_logging(Path(path))


def _saved_arguments_logging(console: Path) -> StatedLogging | None:
    """logging_steps from the Trainer's training_args.bin beside the console, or None."""
    args = _read_or_none(console.parent / _SAVED_ARGUMENTS, read_training_args)
    every = _interval(args)
    return None if every is None else StatedLogging(every, _is_true(args.get("logging_first_step")), None,
                                                    f"{_SAVED_ARGUMENTS} beside the console")


def _wandb_folder_logging(console: Path) -> StatedLogging | None:
    """logging_steps from config.yaml and the last logged step from wandb-summary.json beside W&B's output.log."""
    config = _read_or_none(console.parent / "config.yaml", read_config_yaml)
    summary = _read_or_none(console.parent / "wandb-summary.json", read_json_object)
    every = _interval(config)
    last = next((summary[k] for k in STEP_KEYS if isinstance(summary.get(k), int) and summary[k] > 0), None)
    if every is None and last is None:
        return None
    source = "config.yaml" if every is not None else "wandb-summary.json (the last step logged)"
    return StatedLogging(every, _is_true(config.get("logging_first_step")), last, f"the W&B run's {source}")


def _read_or_none(path: Path, reader) -> dict[str, Any]:
    try:
        return reader(path) if path.is_file() else {}
    except (UnreadableFile, OSError):  # the console is still read; the folder's own reader names the problem
        return {}


def _interval(args: dict[str, Any]) -> int | None:
    """The stated logging_steps where it is a whole number of steps the run logged by: a float below 1 is a fraction
    of the run (transformers >= 4.31), not a count; inf or NaN is no interval; and under `logging_strategy` epoch
    or 'no' the Trainer ignores logging_steps (TrainingArguments prints its default 500 all the same)."""
    if _strategy(args.get("logging_strategy")) in ("epoch", "no"):
        return None
    try:
        number = float(args.get("logging_steps"))
    except (TypeError, ValueError):
        return None
    # (no run logs less often than every billion steps: a larger number is a damaged file, and overflows int64)
    return int(number) if math.isfinite(number) and 1 <= number <= 1e9 and number == int(number) else None


def _strategy(value: Any) -> str:
    """'epoch' from 'epoch', 'EPOCH' or the printed enum 'IntervalStrategy.EPOCH'."""
    return str(value).rsplit(".", 1)[-1].strip().lower()


def _is_true(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1")
