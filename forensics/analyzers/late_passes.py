"""Memorization read from a log's late passes: a training loss still falling several-fold over passes made after every
example had been seen `memorization_epochs` times, down to a level no new text gets, with no eval loss.

`memorization.memorized_without_eval` needs the loss settled under the memorization level over several points (and a
tenfold descent); a short log (three points a few epochs apart) never shows that, though what it shows is the same:
the late passes bring the loss down on examples the model has seen many times already. `collapse.detect_loss_collapse`
calls this where nothing else found memorization and no held-out loss was logged.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .memorization import MANY_PASSES, STAIR_LEVEL
from .memorization_onset import FELL_AFTER, settled_from
from .metrics import LOSS, format_number, passes_over_data


def memorized_over_late_passes(loss: pd.Series, epochs: pd.Series | None, thresholds: Thresholds) -> list[Finding]:
    """A loss logged from `memorization_epochs` passes on that fell `FELL_AFTER` x or more from there, to
    `STAIR_LEVEL` or under at the end of the log, `MANY_PASSES` passes or more into the run: each of those passes shows
    the model examples it has seen five times and more, so a fall that size there is the examples learned by heart, not
    the task (a GPT-2 over a hundred-odd tweets: 0.726 at epoch 6.25, 0.213 at 12.5, 0.142 at 18.75). One `memorization`
    warning from where the loss went under that level to stay, or []."""
    if epochs is None or not len(epochs) or passes_over_data(epochs) < MANY_PASSES:
        return []
    epoch_of = epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy(dtype="float64")
    late = loss[epoch_of >= thresholds.memorization_epochs]
    if len(late) < 2:
        return []
    k = max(1, len(loss) // 10)  # (the first and last tenth's medians: one batch is no level)
    head, tail = float(np.median(late.iloc[:max(1, len(late) // 10)])), float(np.median(loss.iloc[-k:]))
    start = settled_from(loss, STAIR_LEVEL)
    if not 0 < tail <= STAIR_LEVEL or head < FELL_AFTER * tail or start is None:
        return []
    first, last = int(loss.index[start]), int(loss.index[-1])
    where = f"at step {last}" if first == last else f"from step {first} to step {last}"
    message = (f"the loss was {format_number(head)} at step {int(late.index[0])} (epoch "
               f"{format_number(float(epoch_of[loss.index.get_loc(late.index[0])]))}, every example already seen "
               f"{format_number(thresholds.memorization_epochs)} times or more) and fell to {format_number(tail)} by the "
               f"end of the log ({format_number(head / tail)}x lower, under {format_number(STAIR_LEVEL)} {where}, "
               f"{format_number(passes_over_data(epochs))} passes), and no eval loss was logged: "
               "a fall that size on examples seen that often is the training data learned by heart (memorization). "
               "Log an eval loss to see whether the model still generalises; fewer epochs or more data if it does not.")
    return [Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence={
        "head": head, "value": tail, "level": STAIR_LEVEL, "eval_loss_logged": False, "to_end": True,
        "settled_step": first, "late_passes": True})]
