"""A hand-written loop's training status as a box-drawn table, redrawn after each print.

A loop that keeps its rows in a `rich` (or prettytable) table and prints the whole table after each logging step
(fani-lab_RePair's t5.py, `console.print(training_logger)` every 10 steps) leaves in its console:

                           Training Status
    +-----------------------------------------------------------+
    |Epoch | Steps |                    Loss                    |
    |------+-------+--------------------------------------------|
    |  0   |   0   | tensor(10.3821, grad_fn=<NllLossBackward0>)|
    |  0   |  10   | tensor(4.9702, grad_fn=<NllLossBackward0>) |
    +-----------------------------------------------------------+

a border of `+` and `-`, a header of names between `|`, a rule, a row a line, each drawing holding every row of the
one before. A table is read where its header (right under a border: a Markdown table has none) names a step column
(`Step`, `Steps`, `Iter`, `Iteration`, `Batch`) and a loss column (`Loss`, `Train Loss`, `Val Loss`, ...), and its
rows' step, epoch and loss cells are numbers or scalar tensors as `print(loss)` writes them; the other columns are
passed over (a box table's other cells may be anything). Each new row is a `StepLine` of kind "generic" at its step,
its epoch (an `Epoch` column) kept as a metric: `step_numbering` numbers a step counted within each epoch on across
the epochs, as it does a hand-written loop's step lines. A drawing that repeats the rows of the one before adds only
its new rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .console_lines.fields import StepLine, number

MARKER = "+-"  # a box border: a text without one holds no such table
_BORDER = re.compile(r"^\s*\+[-=+]{3,}\+\s*$")
_RULE = re.compile(r"^\s*\|[-=+:| ]*-[-=+:| ]*\|\s*$")
_STEP_NAMES = {"step", "steps", "iter", "iteration", "batch"}
_EPOCH_NAMES = {"epoch", "epochs"}
_LOSS_NAME = re.compile(r"^(?:(train(?:ing)?|val(?:id|idation)?|eval|test|dev)[ _])?loss$")
# A scalar tensor as a loop's print writes it (`tensor(4.9702, grad_fn=<NllLossBackward0>)`), or a plain number
_CELL_NUMBER = re.compile(r"^(?:tensor\(\s*)?([-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?))\s*(?:,[^()]*)?\)?$",
                          re.IGNORECASE)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _header(line: str) -> dict[int, str] | None:
    """The columns the table is read by (cell index -> step, epoch, loss or eval_loss) of a header line naming a step
    and a loss, else None."""
    if "|" not in line:
        return None
    columns = {}
    for i, cell in enumerate(_cells(line)):
        name = " ".join(cell.lower().split())
        loss = _LOSS_NAME.match(name)
        if name in _STEP_NAMES:
            columns[i] = "step"
        elif name in _EPOCH_NAMES:
            columns[i] = "epoch"
        elif loss:
            split = loss.group(1)
            columns[i] = "loss" if split is None or split.startswith("train") else "eval_loss"
    names = list(columns.values())
    return columns if names.count("step") == 1 and ("loss" in names or "eval_loss" in names) else None


def _value(cell: str) -> float | None:
    m = _CELL_NUMBER.match(cell)
    if m is None or cell.lower().startswith("tensor(") != cell.endswith(")"):
        return None
    return number(m.group(1))


@dataclass
class BoxedTable:
    """Box-drawn status tables fed line by line (`owns`, then `feed`, as console_scan's other table readers)."""

    bordered: bool = False  # the line before was a box border: a header may follow
    columns: dict[int, str] | None = None  # the open table's columns read (cell index -> name)
    width: int = 0  # its cells a row
    rows: list[tuple[float, ...]] = field(default_factory=list)  # this drawing's rows
    before: list[tuple[float, ...]] = field(default_factory=list)  # the last drawing's rows, for a redraw

    def owns(self, line: str) -> bool:
        if _BORDER.match(line):
            self._end()
            self.bordered = True
            return True
        if self.columns is not None and (_RULE.match(line) or self._row(line) is not None):
            return True
        header = _header(line) if self.bordered else None
        self._end()
        if header is not None:
            self.columns, self.width = header, len(_cells(line))
            return True
        return False

    def feed(self, line: str) -> StepLine | None:
        values = self._row(line) if self.columns is not None else None
        if values is None:
            return None  # the border, the header, the rule under it
        self.rows.append(values)
        if len(self.rows) <= len(self.before) and self.rows == self.before[:len(self.rows)]:
            return None  # the table drawn again: this row was read from the drawing before
        cells = dict(zip(self.columns.values(), values))
        step = cells.pop("step")
        if step < 0 or step != int(step):
            return None
        metrics = tuple((name, value) for name, value in cells.items() if name != "epoch")
        epoch = (("epoch", cells["epoch"]),) if "epoch" in cells else ()
        return StepLine("generic", int(step), None, metrics + epoch)

    def _row(self, line: str) -> tuple[float, ...] | None:
        """The read cells' values of a row of the open table, in the columns' order; None for any other line."""
        cells = _cells(line) if "|" in line else []
        if len(cells) != self.width:
            return None
        values = tuple(_value(cells[i]) for i in self.columns)
        return None if any(v is None for v in values) else values

    def _end(self) -> None:
        if self.rows:
            self.before = self.rows
        self.bordered, self.columns, self.width, self.rows = False, None, 0, []
