"""Marian NMT's training log (marian-nmt/marian, src/training/scheduler.h), read by `marian_update`, `marian_valid` and
`marian_facts`:

* every `--disp-freq` updates, `[date] Ep. 31 : Up. 14100 : Sen. 70,339 : Cost 0.63000858 : Time 49.71s : 10546.62
  words/s : gNorm 1.3260` (with `--disp-label-counts` the cost is followed by `* 1,234 after 5,678`, with
  `--lr-report` a `: L.r. 3.0000e-04` field): kind "marian" at the update (`Up.`), the cost as `loss` (the training
  cost of `--cost-type`, ce-mean-words: the mean cross-entropy a target token), `gNorm` as grad_norm, the rate and
  the epoch (Marian counts epochs from 1);
* every `--valid-freq` updates, one line a validation metric, `[date] [valid] Ep. 35 : Up. 16000 : ce-mean-words :
  1.62407 : new best` (`stalled 2 times (last best: ...)` after no improvement): kind "marian_valid" at the update,
  ce-mean-words (the mean cross-entropy a target token, Marian's `perplexity` is exp of it) as `eval_loss`,
  perplexity as `eval_ppl`, the rest (`bleu`, `bleu-detok`, `chrf`, `translation`, `cross-entropy`, a sum or a mean
  over sentences, no per-token loss) as `eval_<name>`.

`marian_facts(text)`: the `[marian] Marian v1.11.0` banner gives framework marian and method full (Marian trains
a whole model: it has no adapters), `Parameter type float32, optimization type float32` the precision.
(evilc3_marian_mt_train: a resumed English -> Spanish Transformer, updates 14,100-26,100, read as nothing before.)
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine, _snake

NEEDLE = " : Up. "
MARIAN_UPDATE = re.compile(r"\bEp\. (\d{1,9}) : Up\. (\d{1,12}) : Sen\. [\d,]+ : Cost (" + FLOAT + r")(.*)$",
                           re.IGNORECASE)
_FIELDS = re.compile(r" : (gNorm|L\.r\.) (" + FLOAT + r")", re.IGNORECASE)
MARIAN_VALID = re.compile(r"\[valid\] Ep\. (\d{1,9}) : Up\. (\d{1,12}) : ([\w-]+) : (" + FLOAT + r") : ",
                          re.IGNORECASE)
_VALID_NAMES = {"ce-mean-words": "eval_loss", "perplexity": "eval_ppl"}
_FIELD_NAMES = {"gnorm": "grad_norm", "l.r.": "learning_rate"}

_BANNER = re.compile(r"\[marian\] Marian v\d+\.\d+\.\d+[^\n]*")
_PARAMETER_TYPE = re.compile(r"Parameter type (float32|float16|bfloat16), optimization type \w+")
_PRECISIONS = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def marian_update(m: re.Match) -> StepLine:
    """`Ep. E : Up. U : Sen. N : Cost X : ... : gNorm G`: kind "marian" at U (module docstring)."""
    fields = tuple((_FIELD_NAMES[key.lower()], float(value)) for key, value in _FIELDS.findall(m.group(4)))
    return StepLine("marian", int(m.group(2)), None,
                    (("loss", float(m.group(3))), *fields, ("epoch", float(m.group(1)))))


def marian_valid(m: re.Match) -> StepLine:
    """`[valid] Ep. E : Up. U : <metric> : X : ...`: kind "marian_valid" at U (module docstring)."""
    name = m.group(3).lower()
    return StepLine("marian_valid", int(m.group(2)), None, ((_VALID_NAMES.get(name) or "eval_" + _snake(name),
                                                             float(m.group(4))),))


def marian_facts(text: str) -> dict:
    """{console_framework, console_method, console_precision, each with its `_line`} as Marian's log says them."""
    banner = _BANNER.search(text)
    if banner is None:
        return {}
    line = banner.group(0).strip()
    out = {"console_framework": "marian", "console_framework_line": line,
           "console_method": "full", "console_method_line": f"{line} (Marian trains the whole model: no adapters)"}
    dtype = _PARAMETER_TYPE.search(text)
    if dtype:
        out["console_precision"], out["console_precision_line"] = _PRECISIONS[dtype.group(1)], dtype.group(0)
    return out
