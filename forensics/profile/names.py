"""The run's own names for the profile: its folder, its log files, the model and output names in its config,
and a word looked for in them."""
from __future__ import annotations

import re
from pathlib import Path

from ..config import RunConfig
from ..discover.run_layout import RunLayout
from ..timeline import step_from_name

_NAME_KEYS = ("model.name_or_path", "model._name_or_path", "output_dir", "run_name", "logging_dir", "hub_model_id",
              "best_model_checkpoint", "adapter.base_model_name_or_path", "launch.script")

RUN_FOLDER = "the run folder's name"


def _names(layout: RunLayout | None, config: RunConfig) -> list[tuple[str, str]]:
    """(text, where) of the run's own names: its folder, its log files, model and output names in its config."""
    out = []
    if layout is not None:
        out.append((_own_folder_name(Path(layout.root)), RUN_FOLDER))
        out += [(str(p.relative_to(layout.root)), "a log file's path") for p in layout.log_files
                if p.is_relative_to(layout.root)]
    for key in _NAME_KEYS:
        value = config.get(key)
        if isinstance(value, str):
            out.append((value, f"{key} ({config.source_of(key)})"))
    return out



def word_in(names: list[tuple[str, str]], word: str) -> str | None:
    pattern = re.compile(rf"(?<![a-z]){word}(?![a-z])", re.IGNORECASE)
    return next((f"'{word}' in {where}: {text}" for text, where in names if pattern.search(text)), None)


def _own_folder_name(root: Path) -> str:
    """The name the run's owner gave its folder: the folder analyzed, or, for a checkpoint folder of it
    (`checkpoint-3000`, `global_step3000`), the folder that holds it. The folders above are where the copy lies (a
    checkout called `...-sft`, a share of many runs), not what this run is."""
    root = root if root.name else root.resolve()
    return f"{root.parent.name}/{root.name}" if step_from_name(root.name) is not None else root.name



MODEL_NAME_KEYS = ("model.name_or_path", "model._name_or_path", "adapter.base_model_name_or_path")


def names_a_model_first(name: tuple[str, str]) -> bool:
    """Sort key: the model's own name before the folder's and the files' (a notebook named for a template,
    `Llama3.2_(1B_and_3B)-Conversational.ipynb`, that loads `unsloth/Llama-3.2-3B-Instruct` trains the 3B)."""
    return not name[1].startswith(MODEL_NAME_KEYS)
