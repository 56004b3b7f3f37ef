"""The InfoLogger of THUNLP-AIPoet's poetry and style-transfer models (Jiuge, MixPoet, StyIns; Xiaoyuan Yi's
`logger.py`), fed line by line: every few iterations its `print_log` writes a head line, `epoch: 1, 11/125 8.8%,
6.49s per iter, lr: 0.0003, tr: 1.00, ts: 0` (the epoch, the iteration in it of the epoch's batches, the time an
iteration, the learning rate and the teacher-forcing ratio; `0.320 s per iter` in some), then one indented line or
more of the losses so far in the epoch, `    recon loss: 5.830  ppl:340.38, style loss: 1.134, cycle loss: 5.831`
(`  gen loss: 5.23  ppl:187.3` in the denoising pre-training).

Each record becomes a `StepLine` of kind "info_logger" at the run's iteration, (epoch - 1) x batches + iteration;
the first loss named on its lines (recon loss, gen loss, rec loss) is the loss trained on, the others keep their
names. Its validation record, `epoch: 1, lr: 0.0004, tr: 1.00` with no iteration, is written to a log of its own
(valid_log.txt) and is not read: its file does not say which run's steps it belongs to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .fields import StepLine, _fields

MARKER = "s per iter, lr: "
_HEAD = re.compile(r"^epoch: (\d{1,9}), (\d{1,12})/(\d{1,12}) [\d.]+%, [\d.]+ ?s per iter, (lr: .*?)[;\s]*$")
_LOSS_LINE = re.compile(r"^\s+[A-Za-z][\w ]*?\s*:\s*[-+.\dnNiI]")
_SEPARATOR = re.compile(r",|;|\s{2,}")


@dataclass
class InfoLoggerRecords:
    """The InfoLogger's records, fed line by line: `owns(line)` says a line is one's (its head or an indented loss
    line under it); `feed(line)` returns the record a new head completes, `close()` the last one."""

    step: int | None = None
    metrics: list = field(default_factory=list)

    def owns(self, line: str) -> bool:
        return (MARKER in line and _HEAD.match(line) is not None) or (
            self.step is not None and _LOSS_LINE.match(line) is not None and bool(_pairs(line)))

    def feed(self, line: str) -> StepLine | None:
        head = _HEAD.match(line) if MARKER in line else None
        if head is None:
            self.metrics += _pairs(line)
            return None
        done = self.close()
        epoch, iteration, batches = (int(g) for g in head.group(1, 2, 3))
        self.step = (epoch - 1) * batches + iteration
        self.metrics = _pairs(head.group(4))
        return done

    def close(self) -> StepLine | None:
        names = [name for name, _ in self.metrics]
        first = next((i for i, name in enumerate(names) if name.endswith("loss")), None)
        done = None
        if self.step is not None and first is not None and "loss" not in names:
            metrics = list(self.metrics)
            metrics[first] = ("loss", metrics[first][1])
            done = StepLine("info_logger", self.step, None, tuple(metrics))
        self.step, self.metrics = None, []
        return done


def _pairs(text: str) -> list[tuple[str, float]]:
    """The `name: number` pairs of a line, separated by commas, semicolons or runs of spaces; none unless all are."""
    parts = [p for p in _SEPARATOR.split(text.strip()) if p.strip()]
    metrics, _ = _fields(parts, last_line=False)
    return metrics if len(metrics) == len(parts) else []
