"""A hand-written epoch that prints each batch's loss, then the epoch's average over the training batches, then the
same for the validation batches:

    Loss on step 0: 961.1148071289062
    Average loss for training batches in this epoch: 961.1148071289062
    Loss on step 0: 2874.47607421875
    Average loss for validation batches in this epoch: 2874.47607421875

(2b3o4o_transformer-implementation: a notebook's `train_one_epoch()`, whose second loop evaluates and prints its
batches the same way). The batch lines name no split: those before the training average are the training's, those
between it and the validation average the evaluation's. So the shape is read only where the text holds the training
average (`MARKER`): a batch line of the training as `loss` (kind "batch_losses", the step counted on across epochs:
each epoch's `step` starts over at 0), the validation average as `eval_loss` at the last training step; the training
average (the mean of the batch losses read) and the validation batches are taken and not read again. Where the text
holds no validation average, the training average ends the epoch.
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

MARKER = "Average loss for training batches in this epoch:"
_HELD_OUT = r"(?:validation|eval(?:uation)?|test)"
_HELD_OUT_AVERAGE = re.compile(r"Average loss for " + _HELD_OUT + " batches in this epoch:", re.IGNORECASE)
_BATCH = re.compile(
    r"^[ \t]*Loss on (?:step|batch)[ \t]+(\d{1,12})[ \t]*:[ \t]*(" + FLOAT + r")[ \t]*$", re.IGNORECASE)
_AVERAGE = re.compile(r"^[ \t]*Average loss for (training|" + _HELD_OUT + r") batches in this epoch:"
                      r"[ \t]*(" + FLOAT + r")[ \t]*$", re.IGNORECASE)


class BatchAverages:
    """`owns(line)`: a batch line or an average line of the shape; `feed(line)` reads it (module docstring)."""

    def __init__(self, text: str):
        self._validates = _HELD_OUT_AVERAGE.search(text) is not None  # the loop evaluates after each epoch
        self._training = True  # the batch lines now are the training's (not yet past its average)
        self._offset = 0  # the steps of the epochs before
        self._last: int | None = None  # the last training step read

    def owns(self, line: str) -> bool:
        return "oss " in line and (_BATCH.match(line) or _AVERAGE.match(line)) is not None

    def feed(self, line: str) -> StepLine | None:
        m = _BATCH.match(line)
        if m:
            return self._batch(int(m.group(1)), float(m.group(2)))
        m = _AVERAGE.match(line)
        training = m.group(1).lower() == "training"
        self._training = not (training and self._validates)  # a held-out split's batches come next, or training's
        if self._last is not None and (not training or not self._validates):
            self._offset = self._last + 1  # the epoch is over: the next one's steps count on
        if training or self._last is None:
            return None
        return StepLine("batch_losses", self._last, None, (("eval_loss", float(m.group(2))),))

    def _batch(self, n: int, loss: float) -> StepLine | None:
        if not self._training:
            return None
        self._last = self._offset + n
        return StepLine("batch_losses", self._last, None, (("loss", loss),))
