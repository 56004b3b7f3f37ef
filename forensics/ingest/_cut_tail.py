"""What a metric log still being written (or whose writer was stopped) ends in: a last line with no line end, or a
list with no closing bracket, whose last value may be cut mid-number (`1.2` read from a `1.25` being written).

A line-a-record file's last line with no line end is taken whole only where it is printed in the very shape of a line
before it (`fields.printed_shape`: the same words, the same count of digits after each point), as the console readers
take theirs; else it is left out and said, one line naming what was left out.
"""
from __future__ import annotations

from .console_lines.fields import printed_shape

SHAPE_WINDOW = 50  # the lines before the last one whose shapes are compared with it (a table's rows alternate)


def unsettled_last_line(text: str) -> bool:
    """Whether `text` ends in a line with no line end that no line among the `SHAPE_WINDOW` before it is printed like:
    a line that may be cut mid-write.

    >>> unsettled_last_line("10,1.5748\\n20,1.46"), unsettled_last_line("10,1.5748\\n20,1.4685")
    (True, False)
    >>> unsettled_last_line("10,1.5748\\n20,1.46\\n"), unsettled_last_line("1.46")
    (False, True)
    """
    lines = text.splitlines()
    if not lines or text.endswith(("\n", "\r")) or not lines[-1].strip():
        return False
    shapes = {printed_shape(line) for line in lines[-SHAPE_WINDOW - 1:-1]}
    return printed_shape(lines[-1]) not in shapes


def cut_list_note(count: int, what: str = "values") -> str:
    """The one line a list of `count` values (log entries: `what`) cut before its closing bracket is read with."""
    return f"cut off after {count} {what} (no closing bracket): still being written or interrupted"
