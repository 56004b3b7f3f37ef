"""A hand-written loop's record printed as bare lines, one value a line, under a line that is only its counter:

* `print('epoch', epoch)`, then `print('time', ...)`, `print('loss', loss)` (14renus_cse291: a char-level LSTM seq2seq
  notebook prints `epoch 0` / `time 395.9` / `loss 1.788` each epoch);
* a decorated iteration header, then `name: value` lines (AIdventures_flora: a phi-2 QLoRA loop prints
  `### ITER 50 ###` then `Train Loss: 2.6893` every 50 iterations, 800 records); `===== Epoch 3 =====`,
  `--- step 100 ---`, `** iter 5 **` alike (`#`, `=`, `-` or `*` around the counter).

No line says on its own that it is a metric; the record is its shape, the counter line and the `name value` /
`name: value` lines right under it, so it is read only where the shape repeats (`has_bare_epoch_records`: several
records, each with a loss) and nowhere else: a lone `loss 0.5` is anyone's print. Where it repeats this reader owns
the file's counter headers: `console_scan` then leaves epoch headers to no other reader (`stepless`'s headers date
the several-pair lines under them, `Loss: 5.35, BLEU: 0.51`, a shape these single-pair lines are not).

An epoch's record becomes a `StepLine` of kind "generic_epoch" with its epoch (numbered like any once-an-epoch line
by `step_numbering`: a loop that counts epochs from 0 puts epoch 0 at step 1); an iteration's or a step's, kind
"generic" at the step printed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import _FLOAT, StepLine, _snake, number

_DECOR = r"[#=*\- \t]*"
# a line that is only a counter, its decoration around it: `epoch 3`, `### ITER 50 ###`, `===== Epoch 3/20 =====`
_COUNTER = _DECOR + r"(epoch|iter(?:ation)?|step)[ \t]*:?[ \t]*(\d{1,9})(?:[ \t]*/[ \t]*(\d{1,9}))?" + _DECOR
# one value a line: `loss 1.788`, `Train Loss: 2.7801` (a name of up to three words; no tab: `name:<TAB>value` is
# `blocks.DashedSteps`')
_NAME = r"[A-Za-z_]\w{0,40}(?: [A-Za-z_]\w{0,40}){0,2}"
_SEP = r"(?::[ ]*|[ ]+)"
_HEADER = re.compile("^" + _COUNTER + "$", re.IGNORECASE)
_PAIR = re.compile("^(" + _NAME + ")" + _SEP + "(" + _FLOAT + r")[ \t]*$", re.IGNORECASE)
# a counter line and the pairs right under it, one of them a loss
_RECORD = re.compile("(?im)^" + _COUNTER + r"\r?\n(?:" + _NAME + _SEP + _FLOAT + r"[ \t]*\r?\n)*?"
                     r"(?:[A-Za-z_]\w{0,40} ){0,2}[A-Za-z_]*loss" + _SEP + _FLOAT + r"[ \t]*(?:\r?\n|$)")
# Records enough to call the shape a loop's (two could be anything printed twice)
_FEWEST_RECORDS = 3
# a record's own loss by its split's name (`Train Loss`): the loss of that step, not the Trainer's run-mean train_loss
_TRAIN_LOSS = {"train_loss", "training_loss"}


def has_bare_epoch_records(text: str) -> bool:
    """Whether the console prints bare records under counter lines (module docstring), three or more."""
    if "oss" not in text:
        return False
    return sum(1 for _ in zip(range(_FEWEST_RECORDS), _RECORD.finditer(text))) >= _FEWEST_RECORDS


def record_metric(name: str) -> str:
    """A record line's name in the timeline's vocabulary: `Train Loss` -> loss, `Val Loss` -> eval_loss."""
    snake = _snake(name)
    return "loss" if snake in _TRAIN_LOSS else canonical_metric(snake)


@dataclass
class BareEpochRecords:
    """Counter lines and the `name value` lines right under each, fed line by line like `blocks.DashedSteps`; `owns`
    says a line is the record's (a counter line, or a pair right under one: any other line ends the pairs)."""

    header: tuple | None = None  # (counter word, N, total)
    metrics: list = field(default_factory=list)
    taking: bool = False  # the lines since the counter line were all pairs

    def owns(self, line: str) -> bool:
        if _HEADER.match(line):
            return True
        self.taking = self.taking and _PAIR.match(line) is not None
        return self.taking

    def feed(self, line: str) -> StepLine | None:
        header = _HEADER.match(line)
        if header:
            done = self.close()
            total = int(header.group(3)) if header.group(3) else None
            self.header, self.taking = (header.group(1).lower(), int(header.group(2)), total), True
            return done
        m = _PAIR.match(line)
        value = number(m.group(2))
        if value is not None:
            self.metrics.append((record_metric(m.group(1)), value))
        return None

    def close(self) -> StepLine | None:
        done = _record(*self.header, self.metrics) if self.header is not None and any(
            name == "loss" for name, _ in self.metrics) else None
        self.header, self.metrics, self.taking = None, [], False
        return done


def _record(counter: str, n: int, total: int | None, metrics: list) -> StepLine:
    if counter == "epoch":
        return StepLine("generic_epoch", n, total, (("epoch", float(n)), *metrics))
    return StepLine("generic", n, total, tuple(metrics))
