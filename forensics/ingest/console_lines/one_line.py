"""The table protocol of `console_scan` (`owns(line)`, `feed(line)`) for a shape whose every record is one line, read
by a function of the line: the shapes a text's marker switches on (tf_estimator, value_first)."""
from __future__ import annotations

from typing import Callable

from .fields import StepLine


class OneLineRecords:
    """`owns(line)`: whether `read` makes a record of the line (kept for the `feed(line)` that follows)."""

    def __init__(self, read: Callable[[str], StepLine | None]):
        self._read = read
        self._last: tuple[str, StepLine | None] = ("", None)

    def owns(self, line: str) -> bool:
        self._last = (line, self._read(line))
        return self._last[1] is not None

    def feed(self, line: str) -> StepLine | None:
        return self._last[1] if self._last[0] == line else self._read(line)
