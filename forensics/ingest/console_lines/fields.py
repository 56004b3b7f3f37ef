"""The fields every console step line is read into: `StepLine` (one record), `number` (the number a field starts
with), the `name: value` field reader and the names and units it gives, shared by the readers of
forensics/ingest/console_lines/ (pretrain_lines' module docstring says how names are made canonical), and
`printed_shape`, by which a file's last line (no newline after it) printed as the lines before it is known whole, not
cut mid-write.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...timeline import canonical_metric

# A console's line breaks, as every reader that splits a console into lines counts them: a CRLF is one break
LINE_BREAK = re.compile(r"\r\n|[\r\n]")
NUMBER = re.compile(r"^[-+]?(?:nan|inf(?:inity)?|(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)
# One field: a name of up to three words (`total time`, `matrix lr`, `tok/sec`; prose runs longer), an
# optional colon, a number with its unit.
_FIELD = re.compile(r"^\s*([A-Za-z][\w/.-]*(?: [A-Za-z][\w/.-]*){0,2})\s*(?::\s*)?([-+]?(?:nan|inf|\.?\d)[^\s|]*)",
                    re.IGNORECASE)
UNITS = {"ms": "_ms", "s": "_s", "m": "_min", "min": "_min", "%": "_pct"}
# How a split's loss was taken, said before the split (`average training loss`, `avg val loss`, `mean test loss`:
# ishandahal_simple-language-model's `step: N | average training loss: X | average test loss: Y`, full passes over
# both splits): the split's loss itself, named as it would be without the word
_TAKEN_BEFORE_SPLIT = re.compile(r"^(?:average|avg|mean)_(?=(?:train|training|val|valid|validation|eval|evaluation|test"
                                 r"|testing|dev)_loss$)")
_FIELD_NAMES = {"dt": "time", "tok/sec": "tokens_per_second", "tok-sec": "tokens_per_second", "lrm": "lr_multiplier",
                "mfu": "mfu_pct", "bf16_mfu": "mfu_pct", "ep": "epoch", "step loss": "loss"}


@dataclass(frozen=True)
class StepLine:
    """One console record: its kind ("megatron", "olmo", "nemo", "torchtitan", "nanochat_base", "nanochat",
    "autoresearch", "nanogpt", "verl", "colon_pairs", "llmc", "step_name_value", "epoch_bracket", "tqdm_postfix",
    "flax", "key_value", "uncounted", "printed_tensor", "generic", "generic_epoch", "nemo2", "mindformers", "opennmt",
    "opennmt_valid", "joeynmt_valid", "loss_print", "metric_logger", "held_out_print", "ptb_progress", "ptb_epoch",
    "headed", "piped_step", ...), step, total steps if printed, the
    metrics in print order, and
    whether a cut tail lost fields."""

    kind: str
    step: int
    total: int | None
    metrics: tuple[tuple[str, float], ...]
    cut: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.metrics)

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(value for _, value in self.metrics)


def number(text: str) -> float | None:
    """The number a field starts with ("1.552E+00", "76,631", "NAN", "13372.8/13364.7"); else None."""
    try:
        return float(text)  # the usual case, fast
    except ValueError:
        pass
    m = NUMBER.match(text.strip())
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def perplexity_loss(ppl: float) -> float:
    """The mean loss a perplexity is the exponential of: its natural log (inf for an inf); NaN where it is not above
    0 (NaN itself included)."""
    return math.log(ppl) if ppl > 0 else math.nan


# a printed float, whole (`2.2.1` or `0.91.` is no number: a version, a sentence's full stop)
FLOAT = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)(?![\d.])"


def _snake(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", key.lower()).strip("_")


def _fields(parts: list[str], last_line: bool) -> tuple[list[tuple[str, float]], bool]:
    """The (name, value) of each `name[:] number[unit]` part; on the file's last line the last part
    may be cut mid-write, so it is left out (and said)."""
    cut = last_line and bool(parts[-1].strip())
    metrics = []
    for part in parts[:-1] if cut else parts:
        m = _FIELD.match(part)
        value = number(m.group(2)) if m else None
        if value is not None:
            metrics.append((field_name(m.group(1), m.group(2)), value))
    return metrics, cut


def field_name(key: str, raw: str) -> str:
    """`dt: 120ms` -> time_ms, `total time: 0.5m` -> total_time_min, `mfu: 12.0%` -> mfu_pct."""
    lowered = key.lower()
    name = _FIELD_NAMES.get(lowered) or canonical_metric(_TAKEN_BEFORE_SPLIT.sub("", _snake(lowered)))
    unit = UNITS.get(raw[NUMBER.match(raw).end():].lower(), "")
    return name if name.endswith(unit) else name + unit


def _record(kind: str, step: int, total: str | None, metrics: list, cut: bool) -> StepLine | None:
    return StepLine(kind, step, int(total) if total else None, tuple(metrics), cut=cut) if metrics else None


# A number's shape in a printed line: its whole part any length (a step, a time grow), its decimals counted (a fixed
# `:.4f` prints as many on every line; a number cut mid-write has fewer, or lost the unit after it)
_WHOLE_PART = re.compile(r"(?<![.\d])\d+")
_DIGIT = re.compile(r"\d")


def printed_shape(line: str) -> str:
    """The line with each number's whole part as `9` and each decimal as `9`: two lines of one print statement share it.

    >>> printed_shape("iter 7000: loss 1.1066, time 4639.50ms, mfu 7.90%")
    'iter 9: loss 9.9999, time 9.99ms, mfu 9.99%'
    """
    return _DIGIT.sub("9", _WHOLE_PART.sub("9", line.rstrip()))
