"""ParlAI's metric reports (parlai/scripts/train_model.py, parlai/utils/misc.py `nice_report`), fed line by line.

A training report is a head line, `[ time:10.0s total_exs:1828 epochs:304.67 ]` (2020) or, through ParlAI's logger,
`21:20:10 | time:10s total_exs:2432 epochs:0.04`, then the report as pandas prints a one-row frame: a row of metric
names (`clip  exs  gnorm  gpu_mem   loss  lr   ppl  token_acc  total_train_updates ...`) and a row of values under it
(`.01641 1828  1.368  .9171 .04105   1 1.042  .9942  1828 ...`; ParlAI drops a leading 0, `.9171`). A report wider than
the line is cut into chunks, each chunk's names ending in ` \\` but the last's. A validation is `valid:` (after the
logger's `21:22:36 | `) then the same table; `test:` the same for the test set, read as nothing here (an evaluation
on held-out data after the training ended, not a point of the run). A multi-task report shows a row a task and an
`all` row, each led by its label: the `all` row is read. An evaluation is read after a training report only (ParlAI's
eval_model prints the same `valid:` reports of a model it does not train; a `valid:` line of another program is not
ParlAI's).

Each report becomes a `StepLine` of kind "parlai" at its `total_train_updates` (the optimizer updates so far), names
through `canonical_metric` (gnorm -> grad_norm, lr -> learning_rate), the head's epochs as `epoch`; a validation's
names take the `eval_` prefix. A report with no update count is passed over (it cannot be placed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import StepLine, number

# What only ParlAI prints: the text must hold it before the lines are looked at
MARKER = "total_exs:"
_LOGGER_TIME = r"^(?:\d{2}:\d{2}:\d{2} \| )?"
_TRAIN_HEAD = re.compile(_LOGGER_TIME + r"(?:\[ )?time:[\d.]+s total_exs:\d+ epochs:(\d+(?:\.\d*)?)"
                                        r"(?: [a-z_]+:\S+)*(?: \])?\s*$")
_EVAL_HEAD = re.compile(_LOGGER_TIME + r"(valid|test):\s*$")
_NAME = re.compile(r"^[A-Za-z][\w@/.-]*$")
_STEP = "total_train_updates"
_NOT_EVALUATED = {"lr", "gpu_mem", _STEP}  # a validation report's: the run's, not the evaluation's


@dataclass
class ParlaiReports:
    """ParlAI's reports, fed line by line: `owns(line)` says a line is a report's (a head, a row of names, a row of
    values under them); `feed(line)` returns the record a report completes, else None; `close()` the one left open."""

    part: str | None = None  # "train", "valid" or "test" while a report is read
    epoch: float | None = None
    names: list = field(default_factory=list)  # the chunk's names, with whether more chunks follow
    more: bool = False
    metrics: dict = field(default_factory=dict)
    trained: bool = False  # a training report was read: a `valid:` line before one is someone else's

    def owns(self, line: str) -> bool:
        if MARKER in line and _TRAIN_HEAD.match(line) or self.trained and ":" in line and _EVAL_HEAD.match(line):
            return True
        return self.part is not None and (self._names(line) is not None or self._values(line) is not None)

    def feed(self, line: str) -> StepLine | None:
        head = _TRAIN_HEAD.match(line) if MARKER in line else _EVAL_HEAD.match(line)
        if head:
            done = self.close()
            self.part, self.epoch = ("train", float(head.group(1))) if MARKER in line else (head.group(1), None)
            self.trained = self.trained or self.part == "train"
            return done
        names = self._names(line)
        if names is not None:
            self.more = names[-1] == "\\"
            self.names = names[:-1] if self.more else names
            return None
        labelled, values = self._values(line)
        if labelled is None or labelled == "all":
            self.metrics.update(zip(self.names, values))
        # a one-row report is whole at its last chunk's values; a multi-task one at the next head (or the end)
        return self.close() if labelled is None and not self.more else None

    def close(self) -> StepLine | None:
        step = self.metrics.get(_STEP)
        done = None
        if self.part in ("train", "valid") and step is not None and 0 <= step < 1e15:
            done = StepLine("parlai", int(step), None, self._named())
        self.part, self.epoch, self.names, self.more, self.metrics = None, None, [], False, {}
        return done

    def _named(self) -> tuple[tuple[str, float], ...]:
        if self.part == "valid":
            return tuple(("eval_" + canonical_metric(k), v) for k, v in self.metrics.items() if k not in _NOT_EVALUATED)
        metrics = tuple((canonical_metric(k), v) for k, v in self.metrics.items() if k != _STEP)
        return metrics + ((("epoch", self.epoch),) if self.epoch is not None else ())

    def _names(self, line: str) -> list[str] | None:
        """A row of metric names (a chunk's last cell `\\` where another chunk follows), or None."""
        cells = line.split()
        named = cells[:-1] if cells and cells[-1] == "\\" else cells
        return cells if len(named) >= 2 and all(_NAME.match(c) and number(c) is None for c in named) else None

    def _values(self, line: str) -> tuple[str | None, list[float]] | None:
        """The values of a row under the names (with its task's label in a multi-task report), or None."""
        if not self.names:
            return None
        cells = line.split()
        label = cells[0] if len(cells) == len(self.names) + 1 and number(cells[0]) is None else None
        values = [number(c) for c in (cells[1:] if label is not None else cells)]
        return (label, values) if len(values) == len(self.names) and None not in values else None
