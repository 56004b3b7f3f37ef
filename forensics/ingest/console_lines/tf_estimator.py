"""TensorFlow Estimator's console lines (tf.estimator / TPUEstimator: tensor2tensor, the original BERT, T5 and
mesh-tensorflow, the object-detection API), each read by `read_line`:
* the training hook's line, `loss = 1.96779, step = 54901 (116.492 sec)`: LoggingTensorHook prints its tensors as
  `name = value` joined by `, ` (sorted by name where given as a dict, so the loss before the step), the seconds
  since its last print after them (none on its first print); TF 1's logger glues `INFO:tensorflow:` to the first
  name, absl's writes `I0612 10:11:12.123456 140 basic_session_run_hooks.py:262] ` before it. Kind "tf_estimator"
  at the printed step (`global_step` where a hook names it so); every numeric value is kept under its name, the
  seconds (the time of the whole interval, not a step's) are not;
* the evaluation's summary, `Saving dict for global step 1000: accuracy = 0.91, global_step = 1000, loss = 0.25`
  (estimator.py's `_write_dict_to_summary` log line): kind "tf_estimator_eval", each value as `eval_<name>` (the
  last part of a t2t name `metrics-wmt_ende_tokens_32k/accuracy`), loss -> eval_loss.
The hook's `global_step/sec: 0.86` (and TPUEstimator's `examples/sec: ...`) lines between are rates, not steps:
not read. On a file's last line that may be cut mid-write (no newline after it, `console_scan`) the value that ends
the line is left out and the record marked cut; a hook line that ends in its `(T sec)` is whole.
(tensorflow/tensor2tensor issue 67: nine `INFO:tensorflow:loss = L, step = S (T sec)` lines read as nothing before
this reader.)
"""
from __future__ import annotations

import re

from ...timeline import canonical_metric
from .._jsonlines import as_number  # None for an array or a string tensor: no scalar
from .fields import FLOAT, StepLine, _snake

# In a text that holds none of these, no line is the Estimator's.
MARKERS = (", step = ", ", global_step = ", "Saving dict for global step ")
_NAME = r"[A-Za-z_][\w/.-]*"
_PAIR = _NAME + r" = [^,\s]+"
# the hook's pairs, the whole rest of the line after its logger's prefix (which ends in `:` or `] `)
_HOOK = re.compile(r"(?:^|(?<=[:\]\s]))(" + _PAIR + r"(?:, " + _PAIR + r")+)(?: \(" + FLOAT + r" sec\))?\s*$")
_EVAL = re.compile(r"\bSaving dict for global step (\d{1,18}): (" + _PAIR + r"(?:, " + _PAIR + r")*)\s*$")
_STEP_NAMES = ("step", "global_step")
_MAX_LINE = 2000  # the hook's line is short; a longer line with ` = ` in it is a dump, not searched


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(pair.split(" = ", 1)) for pair in text.split(", ")]


def read_line(line: str, last_line: bool = False) -> StepLine | None:
    """The record of a hook line (a step and a loss among its names) or of an evaluation's summary, else None. On a
    last line that may be cut (`last_line`) a value that ends it is left out and the record marked cut (a hook line
    timed by its `(T sec)` is whole)."""
    if " = " not in line or len(line) > _MAX_LINE:
        return None
    m = _EVAL.search(line) if "Saving dict" in line else None
    if m is not None:
        pairs = _pairs(m.group(2))
        return _evaluation(int(m.group(1)), pairs[:-1] if last_line else pairs, last_line)
    m = _HOOK.search(line)
    if m is None:
        return None
    cut = last_line and not m.group(0).rstrip().endswith(" sec)")
    pairs = _pairs(m.group(1))
    return _hook_line(pairs[:-1] if cut else pairs, cut)


def _hook_line(pairs: list[tuple[str, str]], cut: bool) -> StepLine | None:
    """A LoggingTensorHook line with a step and a loss (every value a number), or None."""
    values = {name: as_number(raw) for name, raw in pairs}
    step = next((values[name] for name in _STEP_NAMES if name in values), None)
    if step is None or not step.is_integer() or None in values.values() or not any("loss" in n for n in values):
        return None
    metrics = tuple((canonical_metric(_snake(name)), value) for name, value in values.items()
                    if name not in _STEP_NAMES)
    return StepLine("tf_estimator", int(step), None, metrics, cut)


def _evaluation(step: int, pairs: list[tuple[str, str]], cut: bool) -> StepLine | None:
    """The evaluation's numeric values at its global step, each `eval_<name>`."""
    metrics = []
    for name, raw in pairs:
        value = as_number(raw)
        if value is not None and name not in _STEP_NAMES:
            metrics.append(("eval_" + _snake(name.rsplit("/", 1)[-1]), value))
    return StepLine("tf_estimator_eval", step, None, tuple(metrics), cut) if metrics else None
