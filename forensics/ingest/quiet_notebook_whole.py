"""A quiet notebook's code read whole (`log_writing_script`): where none of its cells that ran names the log, the cell
that does ran in a session the file no longer records, and so did any cell - including a variant never meant to run
with it (an fp32 loop beside a bfloat16 one, `args = TrainingArguments(fp16=True)` beside `(bf16=True)`). A setting
is read only where every choice among such alternatives says the same of it."""
from __future__ import annotations

import ast

from . import notebook_code
from .notebook_code.arguments import ARGUMENT_CLASSES
from .notebook_code.cells import parsed_cells
from .notebook_code.syntax import called_name
from .notebook_code.trainer_runs import code_trains


def read_whole(cells: list[dict]) -> list[dict]:
    """The cells, each code cell counted in its place. A notebook whose cells that ran name no log of the run printed
    no training either (a quiet notebook): its counts are of a session that did not write the log (MohammadAnsariShiri
    _Enhanced-BioBART's notebook counts only its `!pip install` cell), so the cell that names the log, where one does,
    ran in a session the file no longer records - its code is read whole, as a script's is."""
    return [dict(cell, execution_count=i + 1) if cell.get("cell_type") == "code" else cell
            for i, cell in enumerate(cells)]


def agreed_values(cells: list[dict]) -> dict:
    """The code's values (`notebook_code.code_values`, no outputs) of cells read whole, less each value that changes
    with which one of a set of alternative cells is kept: the cells that each train (`code_trains`), the cells that
    each bind the same name to a training-arguments class (`args = TrainingArguments(...)` twice). (Any other name
    bound twice - a path, a model - is no alternative: keeping one cell without the other would drop what the
    other cell alone binds.)"""
    values = notebook_code.code_values(cells, "")
    for group in _alternatives(cells):
        for kept in group:
            reading = notebook_code.code_values([c for i, c in enumerate(cells) if i == kept or i not in group], "")
            values = {key: value for key, value in values.items() if reading.get(key) == value}
    return values


def _alternatives(cells: list[dict]) -> list[set[int]]:
    """The sets of two or more code cells (by position) that each train, or each bind one name to training arguments."""
    trees = {i: parsed_cells([cell]) for i, cell in enumerate(cells) if cell.get("cell_type") == "code"}
    groups = [{i for i, tree in trees.items() if tree and code_trains(tree)}]
    binders: dict[str, set[int]] = {}
    for i, tree in trees.items():
        for name in (name for t in tree for name in _names_bound_to_arguments(t)):
            binders.setdefault(name, set()).add(i)
    return [group for group in [*groups, *binders.values()] if len(group) > 1]


def _names_bound_to_arguments(tree: ast.Module) -> set[str]:
    """The names a cell's top-level statements bind to training arguments (`args = TrainingArguments(...)`)."""
    return {target.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and ARGUMENT_CLASSES.match(called_name(node.value.func)) for target in node.targets
            if isinstance(target, ast.Name)}
