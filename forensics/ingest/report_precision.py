"""The training precision a report the run wrote beside its metric log names in a field: a Markdown table row
"| precision | bf16 |" (wu-tian807_mamba2exploration's logs/training_report.md, beside logs/loss_log.json) or a field
line "- **Precision**: FP16" (Cyberdude441_CyberQwen-AI's logs/TRAINING_COMPLETION_REPORT.md, beside
logs/training_metrics.csv). Such a report is written by the training code from the settings it ran with, so a field is
read, never prose ("bf16 is recommended" says nothing). Only a Markdown file in a folder that holds a log the run is
read from counts (a document elsewhere in a repository may describe another run), a README or other project document
never (`readme_precision` reads those, as prose), and a report whose fields name two precisions says nothing.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..discover.run import DOCUMENT
from .console_recipes import PRECISION_NAMES

_MARK = r"[*_`]{0,3}"
_FIELD = rf"{_MARK}(?:training[ \t]+)?precision"
_VALUE = rf"{_MARK}(bf16|fp16|fp32){_MARK}"
# the whole field is the precision: a table row of two cells, the field's and its value's (a row of more cells is a
# comparison or a header, "| precision | fp32 | bf16 |": two runs' settings), or a field line's value up to the line's
# end (its colon outside the emphasis, "**Precision**: FP16", or in it, "**Precision:** FP16")
_FIELDS = (re.compile(rf"(?im)^[ \t]*\|[ \t]*{_FIELD}{_MARK}[ \t]*\|[ \t]*{_VALUE}[ \t]*\|[ \t]*$"),
           re.compile(rf"(?im)^[ \t]*(?:[-*+][ \t]+)?{_FIELD}(?:{_MARK}[ \t]*[:：]|[ \t]*[:：]{_MARK})[ \t]*{_VALUE}"
                      r"[ \t]*$"))
REPORT_BYTES = 1 << 20  # a report's settings sit near its top


def report_precision(text: str) -> tuple[str, str] | None:
    """("bf16" | "fp16" | "fp32", the field's line) where the report's precision fields name one precision, else
    None."""
    found = [(PRECISION_NAMES[m.group(1).lower()], m.group(0).strip()) for pattern in _FIELDS
             for m in pattern.finditer(text)]
    said = {precision for precision, _ in found}
    return found[0] if len(said) == 1 else None


def run_reports(log_files: list[Path]) -> list[Path]:
    """The Markdown files (no README or other project document) in the folders that hold the run's logs."""
    folders = sorted({path.parent for path in log_files})
    return [path for folder in folders for path in sorted(folder.glob("*.md"))
            if path.is_file() and not DOCUMENT.match(path.name)]


def read_run_report(path: Path) -> dict:
    """`precision.report` (with `precision.report_words`, the field's line) where the report names one precision in
    its fields; {} otherwise (an OSError is the caller's to report, as for every configuration file)."""
    with open(path, "rb") as fh:
        text = fh.read(REPORT_BYTES).decode("utf-8", errors="replace")
    said = report_precision(text)
    return {"precision.report": said[0], "precision.report_words": said[1]} if said else {}
