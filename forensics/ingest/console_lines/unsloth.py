"""Unsloth's own training loop, `unsloth_train(trainer)` (unsloth_zoo/training_utils.py, the gradient-accumulation fix
of October 2024): after its `==((====))==  Unsloth - 2x faster free finetuning` banner it prints, every logging_steps
optimizer steps, `progress_bar.write(f"{step}, {loss}")`: the step (from 0) and the loss summed over the step's
accumulated batches, rounded to 4 decimals, `10, 2.2398`, on a line of its own or, in a capture that lost the bar's
carriage returns, right after the tqdm bar: `  4%|▎  | 11/312 [02:27<1:00:48, 12.12s/it]10, 2.2398`
(unslothai/unsloth issue 1145).

Such a line (`0, 2.5` is any script's print) is read only in a console that holds the banner (`MARKER`): a
`StepLine` of kind "unsloth_train" at the printed step. (The loss is accumulated_loss, the sum of the step's
micro-batch losses, each already divided by the step's token count: the mean loss of the step.)
"""
from __future__ import annotations

import re

from .fields import FLOAT, StepLine

MARKER = "==((====))==  Unsloth - 2x faster free finetuning"
_PRINT = re.compile(r"^(?:.*?(?:it/s|s/it)\])?(\d{1,12}), (" + FLOAT + r")\s*$", re.IGNORECASE)


class UnslothTrainPrints:
    """unsloth_train's `step, loss` prints, a line each: `owns(line)` says a line is one, `feed(line)` reads it."""

    def owns(self, line: str) -> bool:
        return ", " in line and _PRINT.match(line) is not None

    def feed(self, line: str) -> StepLine | None:
        m = _PRINT.match(line)
        return StepLine("unsloth_train", int(m.group(1)), None, (("loss", float(m.group(2))),))
