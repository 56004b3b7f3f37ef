"""Training-results tables the HF Trainer prints for people: its notebook progress table and its model card's.

* The notebook table (transformers' `NotebookProgressCallback`, an HTML table under the progress bar in Jupyter),
  copied as text: a header `Step<TAB>Training Loss[<TAB>Validation Loss<TAB>metric ...]` and a row a logging step,
  tab-separated (`Epoch` in place of `Step` where the evaluation is per epoch). A GRPO run's table adds `reward`,
  `reward_std`, `kl`, `rewards / <function>` and the like. Pasted into Markdown it becomes `Step | Training Loss | ...`
  with a `-- | --` rule under the header (unslothai/unsloth issue 2291).
* The model card the Trainer writes into output_dir (transformers' modelcard.py, `### Training results`):
  `| Training Loss | Epoch | Step | Validation Loss | metric ... |`, a `|:---:|` rule, a row an evaluation, `No log`
  where no training loss had been logged yet. A web page showing the card (a model hub's mirror) gives the same table
  with its cells separated by spaces alone: `Training Loss Epoch Step Validation Loss Rouge1`, then `3.4071 1.0 1209
  3.1603 17.3175`; its headers of two words (Training Loss, Validation Loss, Gen Len) and `No log` are known.

A table is read where its header names a Step (or Epoch) column and a Training Loss or Validation Loss column; its
rows are the lines after it with as many cells, the step, epoch and loss cells each a number (`nan` included),
`No log` or empty (a metric cell that is no number, such as a dict of ROUGE scores, is passed over). Training Loss ->
loss, Validation Loss -> eval_loss, Epoch -> epoch; the other columns are evaluation metrics (eval_<name>) beside a
Validation Loss column (what compute_metrics returned) and training metrics otherwise (a GRPO run's reward, kl).
Each row becomes a `StepLine` of kind "results_table"; a table without a Step column gives each row its epoch as
its step (kind "results_table_epoch"). A Step table without an Epoch column under the notebook's progress line
(`[500/500 10:09:58, Epoch 19/9223372036854775807]`) takes each row's epoch from it, step x e / n: the passes over
the data go at one pace (with max_steps on a streaming set the total is sys.maxsize, and the count before it is still
the passes made; where it closes on `Epoch 1` of more planned, a floor of more than one pass, the rows go unpaced).
An HTML Epoch table under a progress line that plans its steps and epochs gets a Step column, each
row dated at the end of its epoch (epoch x steps an epoch); a table whose rows count from `0` (the callback's
`int(state.epoch)` a little under each whole epoch) is one epoch later than its labels.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from ..timeline import canonical_metric
from .console_lines.fields import StepLine

# Cheap test before feeding a text's lines: a table's header holds one of these
MARKERS = ("Training Loss", "Validation Loss")
_SPLIT = re.compile(r"\t|\|")
_RULE_CELL = re.compile(r"^:?-{2,}:?$")
_EMPTY_CELLS = {"", "no log", "-"}
_KEY_COLUMNS = ("step", "epoch", "loss", "eval_loss")  # a row whose cell here is no number is no row
_MAX_STEP = 1e15  # no run takes more optimizer steps
# (`Train Loss`: the card Keras' PushToHubCallback writes, `| Train Loss | Validation Loss | Epoch |`, epochs from 0)
_NAMES = {"step": "step", "epoch": "epoch", "training loss": "loss", "train loss": "loss",
          "validation loss": "eval_loss"}


# The model card's table as a web page or a copy of one shows it: its cells separated by spaces alone. Its headers of
# two words are known ones; `No log` is one cell.
_SPACED_NAMES = re.compile(r"(?i)\b(Training Loss|Validation Loss|Gen Len|Model Preparation Time|Wer Ortho|Rouge Lsum|"
                           r"No log)\b")
_SPACED_HEADER = re.compile(r"^\s*(?:Training Loss|Step|Epoch)\s.*\b(?:Step|Epoch)\b")
_WORD = re.compile(r"^[A-Za-z][\w.-]*$")


def _spaced(line: str) -> bool:
    return "\t" not in line and "|" not in line


def _cells(line: str) -> list[str]:
    if _spaced(line):  # (a header's two-word names and `No log` kept whole)
        return [c.replace("\0", " ") for c in _SPACED_NAMES.sub(lambda m: m.group(1).replace(" ", "\0"), line).split()]
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
    if "Loss" not in line or _spaced(line) and not _SPACED_HEADER.match(line):
        return None
    cells = _cells(line)
    if _spaced(line) and not all(_WORD.match(c.replace(" ", "_")) for c in cells):
        return None  # prose that starts like a header
    lowered = {" ".join(c.lower().split()) for c in cells}
    if not lowered & {"step", "epoch"} or not lowered & {"training loss", "train loss", "validation loss"}:
        return None
    evaluated = "validation loss" in lowered
    return [_column_name(c, evaluated) for c in cells]


@dataclass
class ResultsTable:
    """A results table fed line by line: `feed(line)` returns the StepLine a row gives, else None (the header, the
    rule under it, or a line that is no row: that ends the table)."""

    columns: list[str] | None = None
    rows: int = 0
    progress: tuple[int, float] | None = None  # (step, epoch) of the last progress line seen (None: a floor)
    passes: float | None = None  # the table's epochs per step, from the progress line over it (no Epoch column)

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
            step, epoch = self.progress or (0, 0.0)
            self.passes = epoch / step if step > 0 and "step" in found and "epoch" not in found else None
            self.progress = None
        elif "Epoch " in line and (m := _PROGRESS.search(line)):
            self.progress = None if _one_pass_floor(m) else (int(m.group("step")), float(m.group("epoch")))
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
        if step is not None and self.passes:
            values["epoch"] = step * self.passes
        kind = "results_table"
        if step is None:
            step, kind = values.get("epoch"), "results_table_epoch"
        if step is None or not math.isfinite(step) or step < 0 or step > _MAX_STEP or step != int(step):
            return None
        metrics = tuple((name, value) for name, value in values.items())
        return StepLine(kind, int(step), None, metrics) if metrics else None


# --- the notebook table as its HTML (a notebook's display, or a Markdown / HTML export of it) -----------------------

# The table's HTML with the progress bar above it, as Jupyter shows it and nbconvert's Markdown export keeps it
_HTML_BLOCK = re.compile(r"(?s)(?:<div>(?:(?!</div>).){0,3000}?</div>\s*)?<table\b.*?</table>")


def html_tables_as_text(text: str) -> str:
    """A console or export that holds the Trainer's table as HTML (`jupyter nbconvert --to markdown`), with each
    such table (and its progress line) in the text form `ResultsTable` reads; other tables are left as they are."""
    if "</th>" not in text:
        return text
    return _HTML_BLOCK.sub(lambda m: trainer_tables(m.group(0)) or m.group(0), text)

def trainer_tables(html: str) -> str:
    """The Trainer's progress tables in an HTML display, as the text a copy of them gives: the progress line
    (`[60/60 00:30, Epoch 3/3]`), then a header and a row a line, cells separated by tabs. Only tables whose header
    names a Training or Validation Loss column; '' when there are none."""
    parser = _Tables()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # markup the stdlib parser gives up on (an office tool's marked sections)
        return ""
    out = []
    for progress, rows in parser.tables:
        if not rows or not any(cell.endswith(" Loss") for cell in rows[0]):
            continue
        if progress:
            out.append(progress)
        out.extend("\t".join(row) for row in _stepped(rows, progress))
    return "".join(line + "\n" for line in out)


# The progress line over the table: `[ 39/126 11:37 < 27:19, 0.05 it/s, Epoch 0.60/2]`: the run's planned steps and
# epochs
_PLAN = re.compile(r"\[\s*\d+/(?P<steps>\d+)\b[^\]]*\bEpoch [\d.]+/(?P<epochs>\d+)\]")
# ... and where it stands: step n of the plan at epoch e (the epochs done, as the Trainer's state counts them)
_PROGRESS = re.compile(r"\[\s*(?P<step>\d+)/(?P<steps>\d+)\b[^\]]*\bEpoch (?P<epoch>\d+(?:\.\d+)?)/(?P<epochs>\d+)\]")


def _one_pass_floor(progress: re.Match) -> bool:
    """Whether a progress line at the plan's last step says `Epoch 1` of more planned (`[500/500 1:17:36, Epoch
    1/2]`): the notebook callback closes on int(state.epoch), a floor, and a run that ends under its planned epochs
    went past that whole number (max_steps stopped it inside the next pass, or each pass's last micro-batches made
    steps the plan did not count). Paced from it, the rows would end at exactly one pass, a run that saw no example
    twice, where changyuhsin1999_duke_chatbot's 500 steps at 326 an epoch reached 1.53 and its second pass overfit.
    Such a table goes unpaced, as a floor of 0 is (a banner's steps per epoch can still date it). A floor of 2 or
    more claims no more than the passes made; a fraction (`Epoch 0.60/2`, the bar during training) is the state's."""
    step, steps, epochs = int(progress.group("step")), int(progress.group("steps")), int(progress.group("epochs"))
    return progress.group("epoch") == "1" and step == steps and epochs > 1 and epochs <= steps


def _stepped(rows: list[list[str]], progress: str) -> list[list[str]]:
    """An evaluation-per-epoch table (its first column Epoch) with the optimizer step of each row put in front, from
    the steps per epoch its progress line plans (485 steps over 5 epochs: epoch 3 ends at step 291); the table as it
    is where that line does not say."""
    plan = _PLAN.search(progress)
    if plan is None or rows[0][0] != "Epoch" or "Step" in rows[0] or int(plan.group("epochs")) == 0 \
            or int(plan.group("epochs")) > int(plan.group("steps")):  # (max_steps on a stream: sys.maxsize epochs)
        return rows
    per_epoch = int(plan.group("steps")) / int(plan.group("epochs"))
    shift = _epochs_counted_under_whole(rows[1:])
    stepped = [["Step"] + rows[0]]
    for row in rows[1:]:
        try:
            epoch = float(row[0]) + shift
        except ValueError:
            stepped.append([""] + row)
            continue
        stepped.append([str(round(epoch * per_epoch))] + ([_number(epoch)] + row[1:] if shift else row))
    return stepped


def _epochs_counted_under_whole(rows: list[list[str]]) -> int:
    """1 where an evaluation-per-epoch table counts its rows from 0, else 0. transformers' notebook callback writes
    `int(state.epoch)` on each row, and its evaluations come at the ends of the epochs: epoch k ends at k exactly
    where the epoch's batches divide into whole optimizer steps, and a little under k where a few micro-batches are
    left over (`Epoch 0` for the first epoch's evaluation, the last one `Epoch 4` of 5, as the progress bar over it
    says too). No evaluation of that table comes at step 0, so a first row `0` is the end of the first epoch and
    each row is one epoch later than its label."""
    try:
        labels = [float(row[0]) for row in rows]
    except (ValueError, IndexError):
        return 0
    whole = bool(labels) and all(math.isfinite(label) and label == int(label) for label in labels)
    return 1 if whole and labels[0] == 0 else 0


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


class _Tables(HTMLParser):
    """Collects each `<table>`'s rows of cell texts, with the text of the progress line before it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._loose: list[str] = []  # text outside any table since the last one (the progress line)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._rows:
            self._rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._rows is not None:
            progress = " ".join(" ".join(self._loose).split())
            self.tables.append((progress, [row for row in self._rows if row]))
            self._rows, self._loose = None, []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._rows is None and data.strip():
            self._loose.append(data)
