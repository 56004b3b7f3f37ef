"""Console step lines of the small from-scratch LLM projects' hand-written loops: `Epoch:[E/N](n/M) loss: X, ...`
(jingyaogong/minimind's trainer/train_*.py: `Epoch:[1/1](10/39695), loss: 8.5371, logits_loss: 8.5371, aux_loss:
0.0000, lr: 0.0005, epoch_time: 130.0min`; baby-llama2-chinese and its forks: `Epoch:[0/2](100/2000) loss:3.123
lr:0.0003000 epoch_Time:12.0min:`), kind "epoch_bracket": n is the step within epoch E of N, M the steps an epoch
makes, and the fields are `name: number` pairs separated by commas, spaces or periods. The epoch is kept as a metric
(the stdout reader numbers the steps on across epochs, whichever epoch the script counts from).
"""
from __future__ import annotations

import re

from .fields import StepLine, _record, field_name, number

# MiniMind / baby-llama2-chinese: `Epoch:[E/N](n/M)` then `name: number` pairs (commas, spaces or periods between).
EPOCH_BRACKET = re.compile(r"(?<![\w/])Epoch:?\s*\[(\d{1,6})/(\d{1,6})\]\s*\((\d{1,18})/(\d{1,18})\)")
_BRACKET_FIELD = re.compile(r"([A-Za-z][\w]{0,40})\s*:\s*([-+]?(?:nan|inf|\d[\d.]*(?:[eE][-+]?\d+)?)[A-Za-z%]{0,4})",
                            re.IGNORECASE)


def _epoch_bracket(m: re.Match, line: str, last_line: bool) -> StepLine | None:
    """`Epoch:[E/N](n/M) loss: X, lr: Y, ...` (module docstring): step n of M in epoch E, the epoch as a metric;
    a line without a loss is none of these. On the file's last line the last pair may be cut: left out."""
    pairs = _BRACKET_FIELD.findall(line, m.end())
    cut = last_line and bool(pairs) and line.rstrip().endswith(pairs[-1][1])
    metrics = [(field_name(name, raw), value) for name, raw in (pairs[:-1] if cut else pairs)
               if (value := number(raw)) is not None]
    if not any(name == "loss" for name, _ in metrics):
        return None
    return _record("epoch_bracket", int(m.group(3)), m.group(4), metrics + [("epoch", float(m.group(1)))], cut)
