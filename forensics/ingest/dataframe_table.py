"""A pandas DataFrame of per-epoch results, as its repr prints it: a hand-written loop's history table.

A plain PyTorch loop in a notebook often keeps one dict per epoch and shows them as a table each epoch
(`display.clear_output(); display.display(pd.DataFrame(all_results).set_index('epoch'))`: sehbeygi79_Medical-QA-RAG,
t5-small adapters, 20 epochs). Its text/plain rendering, which the notebook reader passes on as console text (the
text/html one, `<table class="dataframe">`, holds the same numbers), is:

           train_loss  valid_acc
    epoch
    0        0.637607   0.669538
    1        0.419869   0.729828

the column names right-aligned over the values, the index's name (where it has one) on a line of its own, then a
row a line, the index first. `print(df)` in a console prints the same; `to_string(index=False)` drops the index.

A table is read where its columns (all plain names) name a loss (`train_loss`, `loss`, `valid_loss`, `val_loss`,
...) and its index or a column is `epoch` (or `step`); each row a `StepLine` (kind "dataframe_epoch", step the epoch,
or "dataframe" at the step). train_loss / training_loss -> loss, a held-out split's prefix (`val_`, `valid_`,
`validation_`, `eval_`, `dev_`) -> `eval_`, `acc` -> `accuracy`. An epoch index counted from 0 (`range(EPOCHS)`) names
each epoch's end one later (as `results_table` reads the Trainer's tables counted from 0). A table drawn again (each
epoch, the rows before the same) adds only its new rows: the last rendering holds every row. pandas' `...` rows (a
long table cut in the middle) are passed over.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..timeline import canonical_metric
from ._jsonlines import as_number  # a whole cell as pandas prints it (`0.637607`, `NaN`, `1.2e-05`), else None
from .console_lines.fields import StepLine

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INDEX_NAME = re.compile(r"^([A-Za-z_]\w*)\s*$")
_STEP_NAMES = ("epoch", "step")
_HELD_OUT = ("val_", "valid_", "validation_", "eval_", "dev_")
_TRAIN = ("train_", "training_")
_ELLIPSIS = re.compile(r"^[\s.]*\.\.\.[\s.]*$")


def _metric(column: str) -> str:
    """The timeline's name of a history table's column (module docstring)."""
    name = column.lower()
    held_out = next((p for p in _HELD_OUT if name.startswith(p)), None)
    if held_out:
        name = name[len(held_out):]
    elif name.startswith(_TRAIN):
        name = name[len(next(p for p in _TRAIN if name.startswith(p))):]
    name = "accuracy" if name == "acc" else name
    return "eval_" + name if held_out else canonical_metric(name)


def header_names(line: str) -> list[str] | None:
    """The column names of a DataFrame header naming a loss, else None. A comment mark before the first name (a
    table a script wrote, `#epoch train_loss val_loss`: danis-b_YodaGPT) is no part of it."""
    if "loss" not in line.lower():
        return None
    names = line.strip().removeprefix("#").split()
    if not names or not all(_NAME.match(n) for n in names):
        return None
    metrics = [_metric(n) for n in names if n.lower() not in _STEP_NAMES]
    return names if {"loss", "eval_loss"} & set(metrics) else None


@dataclass
class DataFrameTable:
    """History tables fed line by line (`owns`, then `feed`, as console_scan's other table readers): `owns` takes a
    header in (it leaves the header line to the other readers), and says whether a line is the open table's: the
    index's name, a row, a `...`."""

    columns: list[str] | None = None
    index_name: str | None = None
    indexed: bool | None = None  # the rows start with an index cell (None until the first row says)
    from_zero: bool = False  # the epochs are counted from 0 (told by the first row)
    rows: list[tuple[float, ...]] = field(default_factory=list)  # this rendering's rows
    before: list[tuple[float, ...]] = field(default_factory=list)  # the last rendering's rows, for a redraw

    def owns(self, line: str) -> bool:
        if self.columns is not None and self._of_the_table(line.split()):
            return True
        self._end()
        names = header_names(line)
        if names is not None:
            self.columns = names
        return False

    def feed(self, line: str) -> StepLine | None:
        cells = line.split()
        if len(cells) == 1 and not self.rows and _INDEX_NAME.match(line):
            self.index_name = cells[0]
            return None
        values = tuple(as_number(c) for c in cells)
        if any(v is None for v in values):
            return None  # pandas' `...` row
        if not self.rows:
            self.indexed = len(values) == len(self.columns) + 1
            first = dict(zip(self._names(), values))
            self.from_zero = first.get("epoch") == 0
        self.rows.append(values)
        if len(self.rows) <= len(self.before) and self.rows == self.before[:len(self.rows)]:
            return None  # the table drawn again: this row was read from the rendering before
        return self._record(values)

    def _of_the_table(self, cells: list[str]) -> bool:
        if len(cells) == 1 and not self.rows and self.index_name is None and _INDEX_NAME.match(cells[0]):
            return cells[0].lower() in _STEP_NAMES or any(n.lower() in _STEP_NAMES for n in self.columns)
        if not any(n in _STEP_NAMES for n in self._names()):
            return False  # no epoch or step says where the rows stand
        if self.rows and _ELLIPSIS.match(" ".join(cells)):
            return True
        n = len(self.columns)
        widths = {n + self.indexed} if self.indexed is not None else {n + 1} if self.index_name else {n, n + 1}
        return len(cells) in widths and all(as_number(c) is not None for c in cells)

    def _names(self) -> list[str]:
        """The names of a row's cells, lowered: the index's first where the rows have one."""
        indexed = self.indexed if self.indexed is not None else self.index_name is not None
        index = [(self.index_name or "").lower()] if indexed else []
        return index + [n.lower() for n in self.columns]

    def _end(self) -> None:
        if self.rows:
            self.before = self.rows
        self.columns, self.index_name, self.indexed, self.from_zero, self.rows = None, None, None, False, []

    def _record(self, values: tuple[float, ...]) -> StepLine | None:
        cells = dict(zip(self._names(), values))
        by = next(n for n in _STEP_NAMES if n in cells)
        if not math.isfinite(cells[by]) or cells[by] < 0 or cells[by] != int(cells[by]):
            return None
        step = int(cells[by]) + (1 if self.from_zero and by == "epoch" else 0)
        metrics = tuple((_metric(n), v) for n, v in cells.items() if n and n not in _STEP_NAMES)
        if by == "epoch":
            return StepLine("dataframe_epoch", step, None, metrics + (("epoch", float(step)),))
        return StepLine("dataframe", step, None, metrics)
