"""What a notebook's cells show, for ingest/notebook: the cells (nbformat 4 and 3), each code cell's outputs as the
console text a terminal would have shown and its kind ("stream", "error", "table": the Trainer's progress table as
tab-separated lines, "result"), a loop's bare printed losses and livelossplot's summary as step lines, and the epoch
sums a hand-written loop prints divided by its batch count.
"""
from __future__ import annotations

from ..discover.livelossplot_summary import as_step_lines
from ..discover.printed_loss_cells import loss_column
from .notebook_code.loss_prints import loss_prints_labelled
from .notebook_code.summed_loss import divided_lines, summed_loss_cells
from .results_table import trainer_tables

# What a display's text/plain says when the display is HTML only: no console text
_HTML_PLACEHOLDER = "<IPython.core.display.HTML object>"
# ... and when it is Markdown: its text/markdown is the text shown (a printed model, a summary put in a code block)
_MARKDOWN_PLACEHOLDER = "<IPython.core.display.Markdown object>"


def cell_shown(cell: dict) -> list[tuple[str, str]]:
    """A cell's outputs as (console text, kind); a loop's column of bare printed losses (`printed_loss_cells`) as
    the `step N: loss X` lines a console reader reads, its passes numbered from 0."""
    column = loss_column(cell)
    if column is not None:
        return [("".join(f"step {k}: loss {value!r}\n" for k, value in enumerate(column)), "stream")]
    return loss_prints_labelled(cell, [summary_read(*output_text(o)) for o in cell_outputs(cell)])


SUMMARY_READ = ("livelossplot's closing summary (each series' min, max and last value) read as the course they allow: "
                "its maximum, then its last value where that is its minimum (a fall), its minimum, then its last "
                "where that is its maximum (a rise); a series that ended between its extremes is not read (their "
                "order is not said); the steps are the summary's order, not the run's")


def summary_read(text: str, kind: str) -> tuple[str, str]:
    """A stream output that is livelossplot's closing summary as the step lines it allows (`livelossplot_summary`)."""
    lines = as_step_lines(text) if kind == "stream" and "cur:" in text else None
    return (lines, kind) if lines else (text, kind)


def per_batch(cells: list[dict], shown: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """The cells' outputs, the epoch sums a hand-written loop prints undivided (`notebook_code.summed_loss`) divided
    by the batch count the notebook tells, so that every reader and analyzer sees a per-batch loss."""
    for i, summed in summed_loss_cells(cells).items():
        if summed.batches:
            shown[i] = [(divided_lines(text, summed) if kind == "stream" else text, kind) for text, kind in shown[i]]
    return shown


def notebook_cells(notebook: dict) -> list | None:
    if isinstance(notebook.get("cells"), list):
        return notebook["cells"]
    worksheets = notebook.get("worksheets")  # nbformat 3
    if isinstance(worksheets, list):
        return [cell for sheet in worksheets if isinstance(sheet, dict)
                for cell in (sheet.get("cells") if isinstance(sheet.get("cells"), list) else [])]
    return None


def cell_outputs(cell: dict) -> list[dict]:
    outputs = cell.get("outputs") if cell.get("cell_type") == "code" else None
    return [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []


def output_text(output: dict) -> tuple[str, str]:
    """The console text an output shows, and its kind: "stream", "error", "table" (the Trainer's progress table)
    or "result"."""
    kind = output.get("output_type")
    if kind == "stream":
        return _ended(_joined(output.get("text"))), "stream"
    if kind in ("error", "pyerr"):
        traceback = output.get("traceback")
        lines = [line for line in traceback if isinstance(line, str)] if isinstance(traceback, list) else []
        return _ended("\n".join(lines + [f"{output.get('ename', '')}: {output.get('evalue', '')}"])), "error"
    if kind in ("display_data", "execute_result", "pyout"):
        data = output.get("data") if isinstance(output.get("data"), dict) else output  # nbformat 3: bare keys
        html = _joined(data.get("text/html", data.get("html")))
        tables = trainer_tables(html) if "Loss</th>" in html else ""
        if tables:
            return tables, "table"
        plain = _joined(data.get("text/plain", data.get("text")))
        if plain.strip() == _MARKDOWN_PLACEHOLDER:  # `display(Markdown(...))`: what it shows is its markdown text
            plain = _joined(data.get("text/markdown"))
        return ("" if plain.strip() == _HTML_PLACEHOLDER else _ended(plain)), "result"
    return "", "other"


def _joined(value) -> str:
    """A notebook's multi-line string: one string, or a list of lines each keeping its newline."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
