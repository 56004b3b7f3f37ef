"""MXNet's training lines (`mx.model.FeedForward.fit` / `mx.mod.Module.fit`, the logger's message after its time and
level), read by `MxnetLines`:
* `mx.callback.Speedometer(batch_size, frequent)` every `frequent` batches: `Epoch[0] Batch [5]\tSpeed: 38.41
  samples/sec\tTrain-Perplexity=64.103469` (MXNet 0.x: `Train-<metric>=<value>`), `Epoch[0] Batch [0-50]\tSpeed:
  ...\taccuracy=0.5\tcross-entropy=2.3` (1.x: the batch range, bare metric names, several of them). Kind "mxnet": the
  batch counter starts over each epoch, so the step runs on from the last batch of the epochs before; `epoch` the
  epochs done (MXNet counts from 0). A perplexity is exp of the mean cross-entropy: loss = ln perplexity (as the PTB
  tutorial's lines, `stepless`), and a `cross-entropy` metric is the loss itself.
* the held-out score at an epoch's end, `Epoch[0] Validation-accuracy=0.81`: kind "mxnet_validation" at the last
  batch read, each value `eval_<name>`. The epoch's `Train-<metric>` and `Time cost` lines beside it repeat the
  epoch's mean and time: not read.
On a file's last line that may be cut mid-write (no newline after it, `console_scan`) the value that ends the line is
left out: the batch line's record marked cut, a validation line (one value) none.
(karishmamalkan_mxnet-gtc-tutorial: five `Train-Perplexity` lines of a char-LSTM, 64.1 -> 36.0, read as nothing
before this reader.)
"""
from __future__ import annotations

import re

from ...timeline import canonical_metric
from .fields import FLOAT, StepLine, _snake, perplexity_loss

MARKER = "Epoch["
_BATCH = re.compile(r"\bEpoch\[(\d{1,6})\] Batch ?\[(?:\d{1,9}-)?(\d{1,9})\]\tSpeed: [\d.]+ samples/sec((?:\t[^\t=]+="
                    + FLOAT + r")+)\s*$", re.IGNORECASE)
_VALIDATION = re.compile(r"\bEpoch\[(\d{1,6})\] Validation-([^\t=\s]+)=(" + FLOAT + r")\s*$", re.IGNORECASE)
_PAIR = re.compile(r"\t(?:Train-)?([^\t=]+)=(" + FLOAT + r")", re.IGNORECASE)
_LOSS_NAMES = ("cross-entropy", "ce", "nll-loss", "nll_loss", "loss")


class MxnetLines:
    """The table protocol of `console_scan` (`owns(line)`, `feed(line)`) for MXNet's lines (module docstring), the
    steps of each epoch run on from the last batch of the epoch before."""

    def __init__(self):
        self._epoch: int | None = None
        self._offset = 0  # the batches of the epochs before the current one
        self._batch = 0  # the last batch read in the current epoch

    def owns(self, line: str) -> bool:
        return MARKER in line and (_BATCH.search(line) or _VALIDATION.search(line)) is not None

    def feed(self, line: str, last_line: bool = False) -> StepLine | None:
        """The line's record; `last_line`: it may be cut mid-write, so the value that ends it is left out (the batch
        record marked cut; a validation line, one value, is none)."""
        m = _BATCH.search(line)
        if m is not None:
            pairs = _PAIR.findall(m.group(3))
            return self._batch_line(int(m.group(1)), int(m.group(2)), pairs[:-1] if last_line else pairs, last_line)
        m = _VALIDATION.search(line) if not last_line else None
        metrics = _metrics(m.group(2), float(m.group(3))) if m else ()
        return StepLine("mxnet_validation", self._offset + self._batch, None,
                        tuple(("eval_" + name, value) for name, value in metrics)) if metrics else None

    def _batch_line(self, epoch: int, batch: int, pairs: list[tuple[str, str]], cut: bool) -> StepLine | None:
        if self._epoch is not None and epoch != self._epoch:
            self._offset += self._batch
        self._epoch, self._batch = epoch, batch
        metrics = [pair for name, raw in pairs for pair in _metrics(name, float(raw))]
        return StepLine("mxnet", self._offset + batch, None, (*metrics, ("epoch", float(epoch))), cut) if metrics \
            else None


def _metrics(name: str, value: float) -> tuple[tuple[str, float], ...]:
    """`Perplexity` -> loss (ln of it) and perplexity; `cross-entropy` -> loss; any other name as the timeline
    names it."""
    lowered = name.strip().lower()
    if lowered == "perplexity":
        return (("loss", perplexity_loss(value)), ("perplexity", value)) if value > 0 else (("perplexity", value),)
    if lowered in _LOSS_NAMES:
        return (("loss", value),)
    return ((canonical_metric(_snake(name.strip())), value),)
