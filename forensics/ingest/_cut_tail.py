"""What a metric log still being written (or whose writer was stopped) ends in: a last line with no line end, or a
list with no closing bracket, whose last value may be cut mid-number (`1.2` read from a `1.25` being written).

A line-a-record file's last line with no line end is taken whole only where its last cell (what may be cut) is printed
in the very shape of a last cell before it (`fields.printed_shape`: the same count of digits after each point, and of
an exponent's), as the console readers take theirs, where it is the file's only row (nothing to compare it with), or
where it is a float's repr to its 12th significant digit or more with every cell of the row before (its length varies
from row to row; a cut there is off only past the 12th digit, never in the exponent); else it is left out and said,
one line naming what was left out.
"""
from __future__ import annotations

import re

from .console_lines.fields import printed_shape

SHAPE_WINDOW = 50  # the lines before the last one whose last cells' shapes are compared with its (rows alternate)
# what follows a line's last separator: all of it that may be cut. The lookbehind starts a match only where a cell
# starts: without it a search tries every character of a long cell before a separator again (quadratic on a long line)
_LAST_CELL = re.compile(r"(?<![^\s,;|_])[^\s,;|_]*$")
_EXPONENT = re.compile(r"[eE][-+]?(\d*)$")
_NUMBER_HEAD = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d*)?$")  # a number, or what a cut leaves of one


def unsettled_last_line(text: str) -> bool:
    """Whether `text` ends in a line with no line end whose last cell (all of it that may be cut) is a number printed
    in no shape the last cells of the `SHAPE_WINDOW` lines before it have: a number that may be cut mid-write. A line
    that ends in a word (`yes`, `no`) or anything else has no number cut.

    >>> unsettled_last_line("10,1.5748\\n20,1.46"), unsettled_last_line("10,1.5748\\n20,1.4685")
    (True, False)
    >>> unsettled_last_line("10,1.5748\\n20,1.46\\n"), unsettled_last_line("1.46")
    (False, False)
    >>> unsettled_last_line("1,0.5748123456789\\n2,0.46851234567891")  # a float's repr: whole to its 12th digit
    False
    >>> unsettled_last_line("1,3.0212765957446806e-05\\n2,2.978723404255319e-0")  # ... but not cut in its exponent
    True
    >>> unsettled_last_line("1,0.9433,yes\\n2,0.943,no"), unsettled_last_line("1,0.9433\\n2,1e-")
    (False, True)
    """
    lines = text.splitlines()
    if not lines or text.endswith(("\n", "\r")) or not lines[-1].strip():
        return False
    last = _last_cell(lines[-1])
    whole_repr = len(lines) > 1 and _full_repr(last, _last_cell(lines[-2])) and _cells(lines[-1]) == _cells(lines[-2])
    if len(lines) < 2 or not _NUMBER_HEAD.match(last) or whole_repr:
        return False  # no row before to compare shapes with (a one-value loss.txt), or a row whole to its 12th digit
    return _shape(last) not in {_shape(_last_cell(line)) for line in lines[-SHAPE_WINDOW - 1:-1]}


def without_cut_last_line(text: str) -> tuple[str, str]:
    """The text without a last line `unsettled_last_line` finds may be cut, and the one line that says so ("" where
    it is whole)."""
    if not unsettled_last_line(text):
        return text, ""
    return text[:max(text.rfind("\n"), text.rfind("\r")) + 1], \
        "the last row (no line end, its last number not printed as the rows before it) may be cut mid-write; dropped"


_CELL_BREAKS = re.compile(r"[\s,;|]+")
_MANTISSA_EXPONENT = re.compile(r"([^eE]*)(?:[eE](.*))?$", re.DOTALL)
_SIGNIFICANT = 12  # a float's repr runs to 13-17 digits: one cut after its 12th is off only past it (module note)


def _full_repr(cell: str, before: str) -> bool:
    """A number printed with `_SIGNIFICANT` or more significant digits (a float's repr, whose length varies from row
    to row): whole enough, where a cut could only have taken digits past the 12th - and not its exponent: a repr
    writes two digits or more of one, and where the cell `before` it has one so has this one (a rate's
    `2.978723404255319e-05` cut to `...319e-0` or `...319` reads 2.98)."""
    mantissa, exponent = _MANTISSA_EXPONENT.match(cell).groups()
    whole_exponent = len(exponent.lstrip("+-")) >= 2 if exponent is not None else not re.search(r"\d[eE]", before)
    return whole_exponent and len(mantissa.lstrip("+-").replace(".", "").lstrip("0")) >= _SIGNIFICANT


def _cells(line: str) -> int:
    return len(_CELL_BREAKS.split(line.strip()))


def _shape(cell: str) -> str:
    """`printed_shape`, with the count of an exponent's digits, which it folds into one `9`: `2e-0` is what a cut
    leaves of `2e-05`, read as 2.0.

    >>> _shape("2e-05"), _shape("2e-0"), _shape("1.5")
    ('9e-9:2', '9e-9:1', '9.9')
    """
    exponent = _EXPONENT.search(cell)
    return printed_shape(cell) + (f":{len(exponent.group(1))}" if exponent else "")


def _last_cell(line: str) -> str:
    return _LAST_CELL.search(line.rstrip()).group()


def cut_list_note(count: int, what: str = "values") -> str:
    """The one line a list of `count` values (log entries: `what`) cut before its closing bracket is read with."""
    return f"cut off after {count} {what} (no closing bracket): still being written or interrupted"
