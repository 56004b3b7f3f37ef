"""A hand-written loop's step line whose fields are joined by `-`, each number glued to its name, and the evaluation
lines it prints between them:

    Epoch1-train_step1-loss=30.305149
    ...
    Epoch 1 Dev Bleu is: 0.0

(zssyqpgdll_TAG: a TF1 tree-to-sequence code-comment model, 1,370 such lines, the step counted across epochs, and
an `Epoch E Dev Bleu is: X` after each evaluation; the `current dev bleu: X` printed after every step repeats the
last evaluation's value, so it is not read: it would date one evaluation at every step after it).

The step line is a `StepLine` of kind "generic" at the printed step, the epoch as a metric (as any hand-written
loop's counter: `step_numbering` numbers on a counter that starts over each epoch). The evaluation line names no step:
it is dated at the step of the training line before it (the evaluation ran after that step), kind "generic" too with
its epoch, its value under the held-out split's name (`eval_bleu`: a score, higher is better; `eval_loss`,
`eval_accuracy`); one before any training line is left out. Read only in a text that holds `_FEWEST_LINES` such step
lines (a lone `Epoch1-step2-loss=3` may be a file name).
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

_STEP_LINE = re.compile(r"^[ \t]*epoch(\d{1,6})-(?:train[_-]?)?(?:step|iter(?:ation)?|batch)(\d{1,12})-"
                        r"(?:train[_-]?)?loss[=:][ \t]*(" + FLOAT + r")[ \t]*$", re.IGNORECASE)
_EVALUATION = re.compile(r"^[ \t]*epoch[ \t]+(\d{1,6})[ \t]+(?:dev|val(?:id|idation)?|eval|test)[ \t]+"
                         r"(bleu|loss|acc(?:uracy)?|ppl|perplexity)[ \t]+is:?[ \t]*(" + FLOAT + r")[ \t]*$",
                         re.IGNORECASE)
_NAMES = {"acc": "accuracy", "ppl": "perplexity"}
_FEWEST_LINES = 3  # two could be anything printed twice
_SEARCH = re.compile(_STEP_LINE.pattern.replace("^", "(?m)^", 1).replace("$", "\\r?$"), re.IGNORECASE)


def glued_field_reader(text: str) -> GluedFieldLines | None:
    """A reader of the text's glued-field step lines and their evaluations (module docstring), where it holds
    `_FEWEST_LINES` step lines; else None."""
    if "poch" not in text and "POCH" not in text:
        return None
    found = sum(1 for _ in zip(range(_FEWEST_LINES), _SEARCH.finditer(text)))
    return GluedFieldLines() if found >= _FEWEST_LINES else None


class GluedFieldLines:
    """`owns(line)`: a step line or an evaluation line of the shape; `feed(line)` reads it (module docstring)."""

    def __init__(self):
        self._last_step: int | None = None

    def owns(self, line: str) -> bool:
        return ("-" in line or " is" in line) and (_STEP_LINE.match(line) or _EVALUATION.match(line)) is not None

    def feed(self, line: str) -> StepLine | None:
        m = _STEP_LINE.match(line)
        if m:
            self._last_step = int(m.group(2))
            return StepLine("generic", self._last_step, None, (("loss", float(m.group(3))),
                                                                 ("epoch", float(m.group(1)))))
        m = _EVALUATION.match(line)
        if self._last_step is None:
            return None
        name = "eval_" + _NAMES.get(m.group(2).lower(), m.group(2).lower())
        return StepLine("generic", self._last_step, None, ((name, float(m.group(3))), ("epoch", float(m.group(1)))))
