"""A Python training script kept beside the metric log it writes, its code read as a notebook's cells that ran.

A metric log a script wrote (`outputs/loss_log.csv`, `results/losses.csv`, `checkpoints/training_log.jsonl`)
carries numbers and nothing of the run's settings; the script that wrote it, where the copy keeps it, names them in its
calls (`LoraConfig(...)`, `BitsAndBytesConfig(load_in_4bit=True)`, `SFTConfig(bf16=True)`, a loop with no autocast). A
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
from pathlib import Path

from ..errors import UnreadableFile
from . import notebook_code
from .notebook_code.cells import parsed_cells
from .notebook_code.trainer_runs import code_trains
from .notebook_json import notebook_object


def log_writing_script_values(root: Path, logs: list[Path], scripts: list[Path], quiet_notebooks: list[Path] = ()
                              ) -> tuple[dict, str] | None:
    """(the code's values, what says them) of the one script of `scripts` (discovery's small .py files under `root`),
    or notebook showing no training, whose code names a log of `logs` (module docstring), where it holds any; else
    None."""
    names = {p.name for p in logs if p.suffix.lower() in (".csv", ".tsv", ".json", ".jsonl", ".txt", ".log")}
    if not names:
        return None
    writers = [(path, log, cells) for path, cells in [*_scripts(scripts, names), *_notebooks(quiet_notebooks)]
               if (log := _writer_of(parsed_cells(cells), names)) is not None]
    if len(writers) != 1:
        return None
    path, log, cells = writers[0]
    # (no outputs: a script prints nowhere the copy keeps, a quiet notebook printed no training)
    values = notebook_code.code_values(cells, "")
    kind = "notebook" if path.suffix == ".ipynb" else "script"
    source = f"the code of {path.relative_to(root)} (the {kind} that writes {log})"
    return (values, source) if values else None


def _scripts(paths: list[Path], names: set[str]):
    """(path, [its code as one cell that ran]) of each script of `paths` whose text holds one of `names` (the others
    are not parsed). Discovery met them as small regular files; one that cannot be read now (its permission, gone since)
    is passed over."""
    for path in paths:
        try:
            code = path.read_text(errors="replace")
        except OSError:
            continue
        if any(log in code for log in names):
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
