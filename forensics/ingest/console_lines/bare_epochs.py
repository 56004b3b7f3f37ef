"""A hand-written loop's record printed as bare lines, one value a line, under a line that is only its counter:

* `print('epoch', epoch)`, then `print('time', ...)`, `print('loss', loss)` (14renus_cse291: a char-level LSTM seq2seq
  notebook prints `epoch 0` / `time 395.9` / `loss 1.788` each epoch);
* a decorated iteration header, then `name: value` lines (AIdventures_flora: a phi-2 QLoRA loop prints
  `### ITER 50 ###` then `Train Loss: 2.6893` every 50 iterations, 800 records); `===== Epoch 3 =====`,
  `--- step 100 ---`, `** iter 5 **` alike (`#`, `=`, `-` or `*` around the counter);
* a step out of the run's steps heading `|`-separated fields, its values on indented `name: value` lines further down
  with whatever the loop prints between (karanravindra_omni: a hand-written GRPO loop prints `Step 1/50 | gold='72'`,
  four `  sample i/4: '...'` lines, tqdm's bar, then `  rewards: [0.1, 0.1, 0.1, 0.1]` and `  loss:    -0.0000`); a
  list is the step's values, read as their mean and their spread (`reward` and `step_reward_std`: the step's
  completions' rewards together, no TRL group mean of spreads).

No line says on its own that it is a metric; the record is its shape, the counter line and the `name value` /
`name: value` lines right under it, so it is read only where the shape repeats (`has_bare_epoch_records`: several
records, each with a loss) and nowhere else: a lone `loss 0.5` is anyone's print. Where it repeats this reader owns
the file's counter headers: `console_scan` then leaves epoch headers to no other reader (`stepless`'s headers date
the several-pair lines under them, `Loss: 5.35, BLEU: 0.51`, a shape these single-pair lines are not).

An epoch's record becomes a `StepLine` of kind "generic_epoch" with its epoch (numbered like any once-an-epoch line
by `step_numbering`: a loop that counts epochs from 0 puts epoch 0 at step 1); an iteration's or a step's, kind
"generic" at the step printed; a `|`-separated header's, kind "piped_step" at the step printed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...timeline import canonical_metric
from .fields import FLOAT, StepLine, _snake, number

_DECOR = r"[#=*\- \t]*"
# a line that is only a counter, its decoration around it: `epoch 3`, `### ITER 50 ###`, `===== Epoch 3/20 =====`
_COUNTER = _DECOR + r"(epoch|iter(?:ation)?|step)[ \t]*:?[ \t]*(\d{1,9})(?:[ \t]*/[ \t]*(\d{1,9}))?" + _DECOR
# one value a line: `loss 1.788`, `Train Loss: 2.7801` (a name of up to three words; no tab: `name:<TAB>value` is
# `blocks.DashedSteps`')
_NAME = r"[A-Za-z_]\w{0,40}(?: [A-Za-z_]\w{0,40}){0,2}"
_SEP = r"(?::[ ]*|[ ]+)"
_HEADER = re.compile("^" + _COUNTER + "$", re.IGNORECASE)
_PAIR = re.compile("^(" + _NAME + ")" + _SEP + "(" + FLOAT + r")[ \t]*$", re.IGNORECASE)
# a counter line and the pairs right under it, one of them a loss
_RECORD = re.compile("(?im)^" + _COUNTER + r"\r?\n(?:" + _NAME + _SEP + FLOAT + r"[ \t]*\r?\n)*?"
                     r"(?:[A-Za-z_]\w{0,40} ){0,2}[A-Za-z_]*loss" + _SEP + FLOAT + r"[ \t]*(?:\r?\n|$)")
# Records enough to call the shape a loop's (two could be anything printed twice)
_FEWEST_RECORDS = 3
# A step header that states the run's length and `|`-separated fields but no loss (a loss on it is a one-line record,
# someone else's), then, past any lines the loop prints between, an indented `loss: V` before the next such header
_PIPED_COUNTER = r"(epoch|iter(?:ation)?|step)[ \t]+(\d{1,9})[ \t]*/[ \t]*(\d{1,9})[ \t]*\|(?![^\n]*loss)[^\n]*"
_PIPED_HEADER = re.compile("^" + _PIPED_COUNTER + "$", re.IGNORECASE)
_PIPED_RECORD = re.compile("(?im)^" + _PIPED_COUNTER + r"\r?\n(?:(?![ \t]*(?:epoch|iter|step)[ \t]+\d+[ \t]*/)[^\n]*\n)"
                           r"{0,40}?[ \t]+(?:[A-Za-z_]\w{0,40} ){0,2}[A-Za-z_]*loss:[ \t]*" + FLOAT + r"[ \t]*$")
# ... whose values are indented under it: a number, or a list of the step's values (`rewards: [0.1, 0.5]`)
_INDENTED_PAIR = re.compile(r"^[ \t]+(" + _NAME + r"):[ \t]*(" + FLOAT + r"|\[[^\]\n]*\])[ \t]*$", re.IGNORECASE)
# Two such records are enough: each header counts a step out of a stated total (`Step 2/50`), the values below it
# indented under it, a shape no repeated print of something else takes (karanravindra_omni died at its third step)
_FEWEST_PIPED_RECORDS = 2
# a record's own loss by its split's name (`Train Loss`): the loss of that step, not the Trainer's run-mean train_loss
_TRAIN_LOSS = {"train_loss", "training_loss"}


def bare_epoch_reader(text: str) -> BareEpochRecords | None:
    """A reader of the console's bare records under counter lines (module docstring), where it prints three or more
    (or two under `|`-separated step headers); None where it prints none."""
    if "oss" not in text:
        return None
    bare = _at_least(_RECORD, text, _FEWEST_RECORDS)
    piped = "|" in text and _at_least(_PIPED_RECORD, text, _FEWEST_PIPED_RECORDS)
    return BareEpochRecords(bare=bare, piped=piped) if bare or piped else None


def has_bare_epoch_records(text: str) -> bool:
    """Whether the console prints such records (`bare_epoch_reader`)."""
    return bare_epoch_reader(text) is not None


def _at_least(record: re.Pattern, text: str, fewest: int) -> bool:
    return sum(1 for _ in zip(range(fewest), record.finditer(text))) >= fewest


def record_metric(name: str) -> str:
    """A record line's name in the timeline's vocabulary: `Train Loss` -> loss, `Val Loss` -> eval_loss."""
    snake = _snake(name)
    return "loss" if snake in _TRAIN_LOSS else canonical_metric(snake)


@dataclass
class BareEpochRecords:
    """Counter lines and the `name value` lines right under each, fed line by line like `blocks.DashedSteps`; `owns`
    says a line is the record's (a counter line, or a pair right under one: any other line ends the pairs; under a
    `|`-separated step header, an indented pair anywhere before the next header)."""

    bare: bool = True  # the file prints bare counter lines' records
    piped: bool = False  # ... `|`-separated step headers' records
    header: tuple | None = None  # (counter word, N, total)
    metrics: list = field(default_factory=list)
    taking: bool = False  # the lines since the counter line were all pairs (or it is a `|` header's record)
    under_pipes: bool = False  # the record is a `|`-separated header's

    def owns(self, line: str) -> bool:
        if self._header(line):
            return True
        if self.under_pipes:
            return _INDENTED_PAIR.match(line) is not None
        self.taking = self.taking and _PAIR.match(line) is not None
        return self.taking

    def feed(self, line: str) -> StepLine | None:
        header = self._header(line)
        if header:
            done = self.close()
            total = int(header.group(3)) if header.group(3) else None
            self.header, self.taking = (header.group(1).lower(), int(header.group(2)), total), True
            self.under_pipes = header.re is _PIPED_HEADER
            return done
        m = _INDENTED_PAIR.match(line) if self.under_pipes else _PAIR.match(line)
        self.metrics += _values(record_metric(m.group(1)), m.group(2))
        return None

    def _header(self, line: str) -> re.Match | None:
        return (self.piped and _PIPED_HEADER.match(line)) or (self.bare and _HEADER.match(line)) or None

    def close(self) -> StepLine | None:
        done = _record(*self.header, self.metrics, self.under_pipes) if self.header is not None and any(
            name == "loss" for name, _ in self.metrics) else None
        self.header, self.metrics, self.taking, self.under_pipes = None, [], False, False
        return done


def _values(name: str, text: str) -> list[tuple[str, float]]:
    """A record line's value: a number, or a list of the step's values as their mean and, of two or more, their
    (sample) spread under `step_<name>_std` (`rewards: [0.1, 0.1, 0.1, 0.1]` -> reward 0.1, step_reward_std 0: the
    step's completions all scored alike, so no group among them had a spread; a spread above 0 may be between groups,
    which is why it is not TRL's `reward_std`, a mean of the groups' own)."""
    if not text.startswith("["):
        value = number(text)
        return [] if value is None else [(name, value)]
    values = [number(part) for part in text[1:-1].split(",") if part.strip()]
    if not values or any(v is None for v in values):
        return []
    name = _singular(name)  # rewards -> reward
    mean = sum(values) / len(values)
    if len(values) < 2:
        return [(name, mean)]
    spread = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    return [(name, mean), (f"step_{name}_std", spread)]


def _singular(name: str) -> str:
    """`reward` of a list named `rewards`, `loss` of `losses`, `accuracy` of `accuracies`."""
    if name.endswith("sses"):
        return name[:-2]
    if name.endswith("ies"):
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _record(counter: str, n: int, total: int | None, metrics: list, under_pipes: bool) -> StepLine:
    if under_pipes:  # ("piped_step": not a stray hand-written line, two such records being the shape's own evidence)
        return StepLine("piped_step", n, total, tuple(metrics))
    if counter == "epoch":
        return StepLine("generic_epoch", n, total, (("epoch", float(n)), *metrics))
    return StepLine("generic", n, total, tuple(metrics))
