"""Step lines that print each value BEFORE its name, after a bare step number: tinygrad's MLPerf trainer
(examples/mlperf/model_train.py), `    1 93.44 s run, 11.8750 loss, 0.000000000001 LR, 642.43 GB used,  19644.30
GFLOPS` (its BERT line: `  100 312.10 ms run, 20.33 ms python, 291.77 ms AMD, 7.52 loss, 0.000123 LR, ...`), read
by `read_line`.

A line is read only where the step is followed by `_FEWEST_PAIRS` or more `<number> <name>` parts separated by
commas, a loss among them: one such pair is any sentence's (`3 epochs, 2 GPUs`), several with a loss are the
shape. Kind "value_first" at the printed step; names in the timeline's vocabulary (LR -> learning_rate), a leading
time unit made a suffix (`93.44 s run` -> run_time_s, `20.33 ms python` -> python_time_ms). (tinygrad/tinygrad pull
request 13803: ten such lines of a llama3 8B run read as nothing before this reader.)

`launch_dtype(text)`: tinygrad's `DEFAULT_FLOAT=bfloat16` (or `half`) among the environment settings of a launch
line, the dtype every float tensor it makes is created in, the weights' among them.
"""
from __future__ import annotations

import re

from ...timeline import canonical_metric
from .fields import FLOAT, StepLine, _snake

MARKER = " loss"
TEXT_KEY = "default_float"  # LogRecords.texts key: `launch_dtype`'s values as JSON
_FEWEST_PAIRS = 3
_PART = FLOAT + r" [A-Za-z][\w/]*(?: [A-Za-z][\w/]*){0,2}"
_LINE = re.compile(r"^\s*(\d{1,18}) +(" + _PART + r"(?:,\s+" + _PART + r"){" + str(_FEWEST_PAIRS - 1) + r",})\s*$",
                   re.IGNORECASE)
_SPLIT_PART = re.compile(r"^(" + FLOAT + r") (.+)$", re.IGNORECASE)
_TIME_UNITS = {"s": "_s", "ms": "_ms"}


def read_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record of `<step> <value> <name>, <value> <name>, ...` (a loss among the names), else None; on a last line
    that may be cut (`last_line`) its last pair is left out (its name may be cut short) and the record marked cut."""
    if MARKER not in line or ", " not in line:
        return None
    m = _LINE.match(line)
    if m is None:
        return None
    parts = re.split(r",\s+", m.group(2))
    metrics = tuple(_pair(part) for part in (parts[:-1] if last_line else parts))
    if not any(name == "loss" for name, _ in metrics):
        return None
    return StepLine("value_first", int(m.group(1)), None, metrics, cut=last_line)


def _pair(part: str) -> tuple[str, float]:
    """`93.44 s run` -> (run_time_s, 93.44); `0.000000000001 LR` -> (learning_rate, 1e-12)."""
    m = _SPLIT_PART.match(part.strip())
    words = m.group(2).split()
    unit = _TIME_UNITS.get(words[0]) if len(words) > 1 else None
    if unit:
        return "_".join(_snake(w) for w in words[1:]) + "_time" + unit, float(m.group(1))
    return canonical_metric(_snake(" ".join(words))), float(m.group(1))


# tinygrad's environment setting of its default float dtype, among the settings before a launched `python`
_DEFAULT_FLOAT = re.compile(r"(?m)^[ \t]*(?:[A-Z_][A-Z0-9_]*=\S*[ \t]+)*?DEFAULT_FLOAT=(\w+)[ \t]+"
                            r"(?:[A-Z_][A-Z0-9_]*=\S*[ \t]+)*python3?[ \t]")
_DTYPES = {"bfloat16": "bfloat16", "half": "float16", "float16": "float16"}


def launch_dtype(text: str) -> dict[str, str]:
    """{"model.load_dtype": dtype} where a launch line sets tinygrad's DEFAULT_FLOAT to a half-precision dtype,
    else {}."""
    m = _DEFAULT_FLOAT.search(text) if "DEFAULT_FLOAT=" in text else None
    dtype = _DTYPES.get(m.group(1).lower()) if m else None
    return {"model.load_dtype": dtype} if dtype else {}
