"""Training-results tables the HF Trainer prints for people: its notebook progress table and its model card's.

* The notebook table (transformers' `NotebookProgressCallback`, an HTML table under the progress bar in Jupyter),
  copied as text: a header `Step<TAB>Training Loss[<TAB>Validation Loss<TAB>metric ...]` and a row a logging step,
  tab-separated (`Epoch` in place of `Step` where the evaluation is per epoch). A GRPO run's table adds `reward`,
  `reward_std`, `kl`, `rewards / <function>` and the like. Pasted into Markdown it becomes `Step | Training Loss | ...`
  with a `-- | --` rule under the header (unslothai/unsloth issue 2291).
* The model card the Trainer writes into output_dir (transformers' modelcard.py, `### Training results`):
  `| Training Loss | Epoch | Step | Validation Loss | metric ... |`, a `|:---:|` rule, a row an evaluation, `No log` where
  no training loss had been logged yet.

A table is read where its header names a Step (or Epoch) column and a Training Loss or Validation Loss column; its
rows are the lines after it with as many cells, the step, epoch and loss cells each a number (`nan` included),
`No log` or empty (a metric cell that is no number, such as a dict of ROUGE scores, is passed over). Training Loss -> loss,
Validation Loss -> eval_loss, Epoch -> epoch; the other columns are evaluation metrics (eval_<name>) beside a
Validation Loss column (what compute_metrics returned) and training metrics otherwise (a GRPO run's reward, kl).
Each row becomes a `StepLine` of kind "results_table"; a table without a Step column gives each row its epoch as
its step (kind "results_table_epoch").
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..timeline import canonical_metric
from .pretrain_lines import StepLine

# Cheap test before feeding a text's lines: a table's header holds one of these
MARKERS = ("Training Loss", "Validation Loss")
_SPLIT = re.compile(r"\t|\|")
_RULE_CELL = re.compile(r"^:?-{2,}:?$")
_EMPTY_CELLS = {"", "no log", "-"}
_KEY_COLUMNS = ("step", "epoch", "loss", "eval_loss")  # a row whose cell here is no number is no row
_MAX_STEP = 1e15  # no run takes more optimizer steps
_NAMES = {"step": "step", "epoch": "epoch", "training loss": "loss", "validation loss": "eval_loss"}


def _cells(line: str) -> list[str]:
    if "\t" in line and "|" not in line:  # a copied notebook table: a blank last cell leaves a trailing tab
        return [cell.strip() for cell in line.strip("\r\n").split("\t")]
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [cell.strip() for cell in _SPLIT.split(text)]


def _column_name(header: str, evaluated: bool) -> str:
    lowered = " ".join(header.lower().split())
    if lowered in _NAMES:
        return _NAMES[lowered]
    name = re.sub(r"\s+", "_", re.sub(r"\s*/\s*", "/", lowered))
    return "eval_" + name if evaluated and not name.startswith("eval_") else canonical_metric(name)


def header_columns(line: str) -> list[str] | None:
    """The metric names of a results table's header line, or None when the line is not one."""
    if "Loss" not in line or ("\t" not in line and "|" not in line):
        return None
    cells = _cells(line)
    lowered = {" ".join(c.lower().split()) for c in cells}
    if not lowered & {"step", "epoch"} or not lowered & {"training loss", "validation loss"}:
        return None
    evaluated = "validation loss" in lowered
    return [_column_name(c, evaluated) for c in cells]


@dataclass
class ResultsTable:
    """A results table fed line by line: `feed(line)` returns the StepLine a row gives, else None (the header, the
    rule under it, or a line that is no row: that ends the table)."""

    columns: list[str] | None = None
    rows: int = 0

    def feed(self, line: str) -> StepLine | None:
        if self.columns is not None:
            cells = _cells(line)
            if len(cells) == len(self.columns):
                if self.rows == 0 and all(_RULE_CELL.match(c) for c in cells):
                    return None  # the Markdown rule under the header
                record = self._row(cells)
                if record is not None:
                    self.rows += 1
                    return record
            self.columns, self.rows = None, 0
        found = header_columns(line)
        if found is not None:
            self.columns, self.rows = found, 0
        return None

    def _row(self, cells: list[str]) -> StepLine | None:
        values: dict[str, float] = {}
        for name, cell in zip(self.columns, cells):
            if cell.lower() in _EMPTY_CELLS:
                continue
            try:
                values[name] = float(cell.replace(",", ""))
            except ValueError:
                if name in _KEY_COLUMNS:
                    return None  # prose, or another table
                # a metric printed as a dict (`{'rouge1': 31.2, ...}`): not one number, passed over
        step = values.pop("step", None)
        kind = "results_table"
        if step is None:
            step, kind = values.get("epoch"), "results_table_epoch"
        if step is None or not math.isfinite(step) or step < 0 or step > _MAX_STEP or step != int(step):
            return None
        metrics = tuple((name, value) for name, value in values.items())
        return StepLine(kind, int(step), None, metrics) if metrics else None
