"""A Python training script kept beside the metric log it writes, its code read as a notebook's cells that ran.

A metric log a script wrote (`outputs/loss_log.csv`, `results/losses.csv`, `training_history.csv`) carries numbers
and nothing of the run's settings; the script that wrote it, where the copy keeps it, names them in its calls
(`LoraConfig(...)`, `BitsAndBytesConfig(load_in_4bit=True)`, `SFTConfig(bf16=True)`, a loop with no autocast). A
script is taken as the log's writer only where a string in its code is the log's file name or a path ending in it
(`Path("outputs/loss_log.csv").open("w")`, `OUTPUT_DIR / "training_history.csv"`): any other script of a repository
(a later DPO stage, an evaluation) says nothing of this run. A notebook that printed no training (discovery's quiet
notebooks) but whose cells that ran name the log is read the same way (teddydog23's train.ipynb writes
logs/train_metrics.csv). Where several name the log, none is read (which one wrote it is not said). Parsed with
`ast`, never run; `notebook_code.code_values` reads a script as one cell that ran, with no outputs (the machine's
tests stay unanswered).
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

from ..errors import UnreadableFile
from . import notebook_code
from .notebook_code.cells import parsed_cells
from .notebook_code.trainer_runs import code_trains
from .notebook_json import notebook_object

_SCRIPT_BYTES = 256 * 1024  # a training script is small: a bigger .py file is generated or vendored code
_SKIPPED_FOLDERS = ("site-packages", "node_modules", "__pycache__")


def log_writing_script_values(root: Path, logs: list[Path], quiet_notebooks: list[Path] = ()
                              ) -> tuple[dict, str] | None:
    """(the code's values, what says them) of the one script, or notebook showing no training, under `root` whose
    code names a log of `logs` (module docstring), where it holds any; else None."""
    names = {p.name for p in logs if p.suffix.lower() in (".csv", ".tsv", ".json", ".txt", ".log")}
    if not names:
        return None
    writers = [(path, log, cells) for path, cells in [*_scripts(root, names), *_notebooks(quiet_notebooks)]
               if (log := _writer_of(parsed_cells(cells), names)) is not None]
    if len(writers) != 1:
        return None
    path, log, cells = writers[0]
    # (no outputs: a script prints nowhere the copy keeps, a quiet notebook printed no training)
    values = notebook_code.code_values(cells, "")
    kind = "notebook" if path.suffix == ".ipynb" else "script"
    source = f"the code of {path.relative_to(root)} (the {kind} that writes {log})"
    return (values, source) if values else None


def _scripts(root: Path, names: set[str]):
    """(path, [its code as one cell that ran]) of each small .py file under `root` whose text holds one of `names`
    (the others are not parsed)."""
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS]
        for name in sorted(files):
            path = Path(dirpath) / name
            if not name.endswith(".py") or path.is_symlink() or path.stat().st_size > _SCRIPT_BYTES:
                continue
            code = path.read_text(errors="replace")
            if any(name in code for name in names):
                # (a script that does not parse gives no tree: `parsed_cells` passes it over)
                yield path, [{"cell_type": "code", "execution_count": 1, "outputs": [], "source": code}]


def _notebooks(paths: list[Path]):
    """(path, its cells) of each notebook that reads as one."""
    for path in paths:
        try:
            notebook = notebook_object(path)[0]
        except UnreadableFile:
            continue
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if isinstance(cells, list):
            yield path, [cell for cell in cells if isinstance(cell, dict)]


def _writer_of(trees: list[ast.AST], names: set[str]) -> str | None:
    """The log of `names` the code names, where the code trains (`code_trains`): a script that reads the log to plot
    it (`pd.read_csv("outputs/loss_log.csv")`) names it too, and its model load (float16 to plot or evaluate) says
    nothing of the training."""
    return _named_log(trees, names) if code_trains(trees) else None


def _named_log(trees: list[ast.AST], names: set[str]) -> str | None:
    """The log file name a string of the code that ran is, or ends a path with; else None."""
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.replace("\\", "/")
            found = next((n for n in names if text == n or text.endswith("/" + n)), None)
            if found is not None:
                return found
    return None
