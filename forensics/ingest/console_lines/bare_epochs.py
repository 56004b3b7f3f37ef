"""A hand-written loop's per-epoch record printed as bare lines, one value a line: `print('epoch', epoch)`, then
`print('time', ...)`, `print('loss', loss)` (14renus_cse291: a char-level LSTM seq2seq notebook prints
`epoch 0` / `time 395.9` / `loss 1.788` each epoch). No line says on its own that it is a metric; the record is its
shape, the `epoch N` line and the `name value` lines under it, so it is read only where the shape repeats
(`has_bare_epoch_records`: several epochs, each with a loss) and nowhere else: a lone `loss 0.5` is anyone's print.

Each record becomes a `StepLine` of kind "generic_epoch" with its epoch (numbered like any once-an-epoch line by
`step_numbering`: a loop that counts epochs from 0 puts epoch 0 at step 1).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import _FLOAT, StepLine, number

_EPOCH = re.compile(r"^epoch (\d{1,9})\s*$", re.IGNORECASE)
_PAIR = re.compile(r"^([A-Za-z_]\w{0,40}) (" + _FLOAT + r")\s*$", re.IGNORECASE)
# an `epoch N` line and the bare pairs right under it, one of them a loss
_RECORD = re.compile(r"(?im)^epoch \d{1,9}[ \t]*\r?\n(?:[A-Za-z_]\w{0,40} " + _FLOAT + r"[ \t]*\r?\n)*?"
                     r"[A-Za-z_]*loss " + _FLOAT + r"[ \t]*(?:\r?\n|$)")
# Records enough to call the shape a loop's (two could be anything printed twice)
_FEWEST_RECORDS = 3


def has_bare_epoch_records(text: str) -> bool:
    """Whether the console prints bare per-epoch records (module docstring), three or more."""
    if "poch " not in text or "loss " not in text:
        return False
    return sum(1 for _ in zip(range(_FEWEST_RECORDS), _RECORD.finditer(text))) >= _FEWEST_RECORDS


@dataclass
class BareEpochRecords:
    """`epoch N` lines and the `name value` lines right under each, fed line by line like `blocks.DashedSteps`; `owns`
    says a line is the record's (an `epoch N` line, or a pair right under one: any other line ends the pairs)."""

    epoch: int | None = None
    metrics: list = field(default_factory=list)
    taking: bool = False  # the lines since the `epoch N` line were all pairs

    def owns(self, line: str) -> bool:
        if _EPOCH.match(line):
            return True
        self.taking = self.taking and _PAIR.match(line) is not None
        return self.taking

    def feed(self, line: str) -> StepLine | None:
        header = _EPOCH.match(line)
        if header:
            done = self.close()
            self.epoch, self.taking = int(header.group(1)), True
            return done
        m = _PAIR.match(line)
        value = number(m.group(2))
        if value is not None:
            self.metrics.append((canonical_metric(m.group(1)), value))
        return None

    def close(self) -> StepLine | None:
        done = (StepLine("generic_epoch", self.epoch, None, (("epoch", float(self.epoch)), *self.metrics))
                if self.epoch is not None and any(name == "loss" for name, _ in self.metrics) else None)
        self.epoch, self.metrics, self.taking = None, [], False
        return done
