"""A Python training script kept beside the metric log it writes, its code read as a notebook's cells that ran.

A metric log a script wrote (`outputs/loss_log.csv`, `results/losses.csv`, `checkpoints/training_log.jsonl`) carries
numbers and nothing of the run's settings; the script that wrote it, where the copy keeps it, names them in its calls
(`LoraConfig(...)`, `BitsAndBytesConfig(load_in_4bit=True)`, `SFTConfig(bf16=True)`, a loop with no autocast). A script
is taken as the log's writer only where a string in its code is the log's file name or a path ending in it
(`Path("outputs/loss_log.csv").open("w")`, `OUTPUT_DIR / "training_history.csv"`): any other script of a repository (a
later DPO stage, an evaluation) says nothing of this run. A notebook that printed no training (discovery's quiet
notebooks) but whose cells that ran name the log is read the same way (teddydog23's train.ipynb writes
logs/train_metrics.csv); where none of its cells that ran names the log, its counts are of another session and its code
is read whole, as a script's (`quiet_notebook_whole`). Where several name the log, none is read (which one wrote it is
not said). Parsed with `ast`, never run; `notebook_code.code_values` reads a script as one cell that ran, with no
outputs (the machine's tests stay unanswered). A script that imports only Python's own library, NumPy (naming no
float32) and modules beside it (one it imports whole read for its own imports) trains in no tensor library: its loop
asking for nothing lower says no fp32 (Python's and NumPy's floats are 64-bit).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

from ..errors import UnreadableFile
from . import notebook_code
from .notebook_code.cells import parsed_cells
from .notebook_code.syntax import called_name
from .notebook_code.trainer_runs import code_trains
from .notebook_json import notebook_object
from .quiet_notebook_whole import agreed_values, read_whole


def log_writing_script_values(root: Path, logs: list[Path], scripts: list[Path], quiet_notebooks: list[Path] = ()
                              ) -> tuple[dict, str] | None:
    """(the code's values, what says them) of the one script of `scripts` (discovery's small .py files under `root`),
    or notebook showing no training, whose code names a log of `logs` (module docstring), where it holds any; else
    None."""
    names = {p.name for p in logs if p.suffix.lower() in (".csv", ".tsv", ".json", ".jsonl", ".txt", ".log")}
    if not names:
        return None
    notebooks = list(_notebooks(quiet_notebooks, names))
    read_whole_ones = {path for path, _, whole in notebooks if whole}
    candidates = [(path, cells, parsed_cells(cells))
                  for path, cells in [*_scripts(scripts, names), *((path, cells) for path, cells, _ in notebooks)]]
    writers = [(path, log, cells, trees) for path, cells, trees in candidates
               if (log := _writer_of(trees, names)) is not None]
    if not writers:
        writers = _readers_of_a_bound_log_name(root, candidates, scripts, names)
    if len(writers) != 1:
        return None
    path, log, cells, trees = writers[0]
    # (no outputs: a script prints nowhere the copy keeps, a quiet notebook printed no training)
    values = agreed_values(cells) if path in read_whole_ones else notebook_code.code_values(cells, "")
    kind = "notebook" if path.suffix == ".ipynb" else "script"
    if kind == "script" and _imports_only_its_own_and_the_standard_library(path, trees):
        values.pop("precision.default_fp32", None)
    source = f"the code of {path.relative_to(root)} (the {kind} that writes {log})"
    return (values, source) if values else None


def _readers_of_a_bound_log_name(root: Path, candidates: list, scripts: list[Path], names: set[str]) -> list[tuple]:
    """Where no script that names a log trains: (path, what it writes, cells, trees) of each script that trains and
    reads a name a script naming the log binds to it (harsha-vardhan4_HarshaLM's utils/config.py binds
    `training_log_name: str = "training_metrics.json"`, training/trainer.py opens its logger on
    `config.training_log_name`, importing utils.config); a script that only reads it (to plot the log) writes
    nothing, nor one that reads the same name without importing the module that binds it."""
    bound = {name: (log, path) for path, _, trees in candidates if path.suffix == ".py"
             for name, log in _names_bound_to_a_log(trees, names)}
    if not bound:
        return []
    binders = {path for _, path in bound.values()}
    readers = []
    for path, cells in _scripts([p for p in scripts if p not in binders], set(bound)):
        trees = parsed_cells(cells)
        read = {name for name in _read_names(trees) & set(bound) if _imports_module(trees, bound[name][1].stem)}
        if read and code_trains(trees):
            name = min(read)
            log, binder = bound[name]
            readers.append((path, f"{log}, named by {binder.relative_to(root)}'s {name}", cells, trees))
    return readers


def _names_bound_to_a_log(trees: list[ast.AST], names: set[str]):
    """(name, log) of each assignment whose value names a log (`LOG = os.path.join(RUNS, "train_log.txt")`, a
    dataclass field's default)."""
    for node in (node for tree in trees for node in ast.walk(tree)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        log = _named_log([node.value], names) if targets else None
        if log is not None:
            yield from ((target.id, log) for target in targets if isinstance(target, ast.Name))


def _imports_module(trees: list[ast.AST], module: str) -> bool:
    """The code imports the module of that name, or from it (`from utils.config import ModelConfig`, `import config`,
    `from utils import config`)."""
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[-1] == module for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and ((node.module or "").split(".")[-1] == module
                                                 or any(a.name == module for a in node.names)):
            return True
    return False


def _read_names(trees: list[ast.AST]) -> set[str]:
    """The names the code reads, bare or as an attribute (`config.training_log_name`)."""
    return {node.attr if isinstance(node, ast.Attribute) else node.id for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) or isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _imports_only_its_own_and_the_standard_library(path: Path, trees: list[ast.AST]) -> bool:
    """The script imports no package but Python's own, NumPy (whose default float is 64-bit too) where the code never
    names float32, and modules beside it: no tensor library whose default is float32 (Rogithgoud_text-transformer's
    pure-Python transformer computes in Python's 64-bit floats), so a loop that asks for nothing lower says no
    precision. A module beside it imported whole (`from layers import *`) is read for its own imports, one level."""
    tops = _imported_tops(trees)
    if "numpy" in tops and not _names_float32(trees):
        tops.discard("numpy")
    tops |= {top for module in _star_imported(trees) for top in _imported_tops(_module_trees(path.parent, module))}
    return all(top in sys.stdlib_module_names or _beside(path, top) for top in tops)


def _imported_tops(trees: list[ast.AST]) -> set[str]:
    """The top-level packages the code imports: `import x.y`, `from x import y`, `importlib.import_module("x")`."""
    nodes = [node for tree in trees for node in ast.walk(tree)]
    tops = {alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    tops |= {node.module.split(".")[0] for node in nodes
             if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    return tops | {node.args[0].value.split(".")[0] for node in nodes if isinstance(node, ast.Call)
                   and called_name(node.func) in ("import_module", "__import__") and node.args
                   and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)}


def _module_trees(folder: Path, module: str) -> list[ast.AST]:
    """The parsed code of `folder`/`module`.py, read as a script is (`_scripts`); none where it is not there."""
    found = list(_scripts([folder / f"{module}.py"], {""}))  # ("" is in any text: every readable one is yielded)
    return parsed_cells(found[0][1]) if found else []


def _star_imported(trees: list[ast.AST]) -> set[str]:
    """The modules the code imports whole (`from layers import *`)."""
    return {node.module for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module and any(alias.name == "*" for alias in node.names)}


def _names_float32(trees: list[ast.AST]) -> bool:
    """`np.float32`, `dtype="float32"`: the code asks for 32-bit floats by name."""
    return any(isinstance(node, ast.Attribute) and node.attr == "float32"
               or isinstance(node, ast.Constant) and node.value == "float32"
               for tree in trees for node in ast.walk(tree))


def _beside(path: Path, module: str) -> bool:
    """A module of the script's own folder (`from model import Model` beside src/model.py)."""
    return (path.parent / f"{module}.py").is_file() or (path.parent / module).is_dir()


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


def _notebooks(paths: list[Path], names: set[str]):
    """(path, its cells, whether read whole) of each notebook that reads as one; where no cell that ran names a log of
    `names`, every code cell as one that ran (`quiet_notebook_whole.read_whole`)."""
    for path in paths:
        try:
            notebook = notebook_object(path)[0]
        except UnreadableFile:
            continue
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        if isinstance(cells, list):
            cells = [cell for cell in cells if isinstance(cell, dict)]
            named = _named_log(parsed_cells(cells), names) is not None
            yield (path, cells, False) if named else (path, read_whole(cells), True)


def _writer_of(trees: list[ast.AST], names: set[str]) -> str | None:
    """The log of `names` the code names, where the code trains (`code_trains`): a script that reads the log to plot
    it (`pd.read_csv("outputs/loss_log.csv")`) names it too, and its model load (float16 to plot or evaluate) says
    nothing of the training."""
    return _named_log(trees, names) if code_trains(trees) else None


def _named_log(trees: list[ast.AST], names: set[str]) -> str | None:
    """The log file name a string of the code that ran is, or ends a path with, where the code does not only read
    that path (`_read_paths`); else None."""
    read = _read_paths(trees)
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in read:
            text = node.value.replace("\\", "/")
            found = next((n for n in names if text == n or text.endswith("/" + n)), None)
            if found is not None:
                return found
    return None


# a function whose first argument is a file it reads (`pd.read_csv(path)`, `np.loadtxt(path)`)
_READERS = {"read_csv", "read_json", "read_table", "loadtxt", "genfromtxt"}


def _read_paths(trees: list[ast.AST]) -> set[int]:
    """The ids of the strings the code only hands to a reader: `pd.read_csv("outputs/loss_log.csv")`, a read-mode
    `open(...)` (`json.load(open(path))`), `Path(...).read_text()` or `Path(...).open()` - a script plotting the log
    names it as its writer does."""
    out = set()
    for call in (node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)):
        name = called_name(call.func)
        if name in _READERS or name == "open" and isinstance(call.func, ast.Name) and _read_mode(call, 1):
            read = call.args[:1]
        elif isinstance(call.func, ast.Attribute) and (name in ("read_text", "read_bytes")
                                                       or name == "open" and _read_mode(call, 0)):
            read = [call.func.value]
        else:
            continue
        out |= {id(node) for arg in read for node in ast.walk(arg) if isinstance(node, ast.Constant)}
    return out


def _read_mode(call: ast.Call, position: int) -> bool:
    """`open`'s mode (positional at `position`, or `mode=`) is absent or a literal that neither writes nor appends."""
    mode = next((k.value for k in call.keywords if k.arg == "mode"),
                call.args[position] if len(call.args) > position else None)
    return mode is None or isinstance(mode, ast.Constant) and isinstance(mode.value, str) \
        and not set(mode.value) & set("wax+")
