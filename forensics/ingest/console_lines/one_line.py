"""The table protocol of `console_scan` (`owns(line)`, `feed(line)`) for a shape whose every record is one line, read
by a function of the line: the shapes a text's marker switches on (tf_estimator, value_first, elapsed_percent).
`feed(line, last_line=True)`: the line may be cut mid-write (`console_scan` says so of the file's last line where it
is printed in no shape of a line before it), and the function is told so."""
from __future__ import annotations

from typing import Callable

from .fields import StepLine


class OneLineRecords:
    """`owns(line)`: whether `read` makes a record of the line (kept for the `feed(line)` that follows)."""

    def __init__(self, read: Callable[[str, bool], StepLine | None]):
        self._read = read
        self._last: tuple[str, StepLine | None] = ("", None)

    def owns(self, line: str) -> bool:
        self._last = (line, self._read(line, False))
        return self._last[1] is not None

    def feed(self, line: str, last_line: bool = False) -> StepLine | None:
        if last_line:
            return self._read(line, True)
        return self._last[1] if self._last[0] == line else self._read(line, False)
