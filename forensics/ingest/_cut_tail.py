"""What a metric log still being written (or whose writer was stopped) ends in: a last line with no line end, or a
list with no closing bracket, whose last value may be cut mid-number (`1.2` read from a `1.25` being written).

A line-a-record file's last line with no line end is taken whole only where its last cell (what may be cut) is printed
in the very shape of a last cell before it (`fields.printed_shape`: the same count of digits after each point), as the
console readers take theirs; else it is left out and said, one line naming what was left out. A float's repr (13 to 17
digits) cut in its last digits may keep a shape seen before: the value then read is off past its 12th digit.
"""
from __future__ import annotations

import re

from .console_lines.fields import printed_shape

SHAPE_WINDOW = 50  # the lines before the last one whose last cells' shapes are compared with its (rows alternate)
_LAST_CELL = re.compile(r"[^\s,;|_]*$")  # what follows a line's last separator: all of it that may be cut
_NUMBER_HEAD = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d*)?$")  # a number, or what a cut leaves of one


def unsettled_last_line(text: str) -> bool:
    """Whether `text` ends in a line with no line end whose last cell (all of it that may be cut) is a number printed
    in no shape the last cells of the `SHAPE_WINDOW` lines before it have: a number that may be cut mid-write. A line
    that ends in a word (`yes`, `no`) or anything else has no number cut.

    >>> unsettled_last_line("10,1.5748\\n20,1.46"), unsettled_last_line("10,1.5748\\n20,1.4685")
    (True, False)
    >>> unsettled_last_line("10,1.5748\\n20,1.46\\n"), unsettled_last_line("1.46")
    (False, True)
    >>> unsettled_last_line("1,0.9433,yes\\n2,0.943,no"), unsettled_last_line("1,0.9433\\n2,1e-")
    (False, True)
    """
    lines = text.splitlines()
    if not lines or text.endswith(("\n", "\r")) or not lines[-1].strip():
        return False
    last = _last_cell(lines[-1])
    if not _NUMBER_HEAD.match(last):
        return False
    return printed_shape(last) not in {printed_shape(_last_cell(line)) for line in lines[-SHAPE_WINDOW - 1:-1]}


def without_cut_last_line(text: str) -> tuple[str, str]:
    """The text without a last line `unsettled_last_line` finds may be cut, and the one line that says so ("" where
    it is whole)."""
    if not unsettled_last_line(text):
        return text, ""
    return text[:max(text.rfind("\n"), text.rfind("\r")) + 1], \
        "the last row (no line end, its last number not printed as the rows before it) may be cut mid-write; dropped"


def _last_cell(line: str) -> str:
    return _LAST_CELL.search(line.rstrip()).group()


def cut_list_note(count: int, what: str = "values") -> str:
    """The one line a list of `count` values (log entries: `what`) cut before its closing bracket is read with."""
    return f"cut off after {count} {what} (no closing bracket): still being written or interrupted"
