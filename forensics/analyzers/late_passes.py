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
from .memorization import MANY_PASSES, PRETRAINING_FLOOR, STAIR_LEVEL
from .memorization_onset import FELL_AFTER, settled_from
from .metrics import LOSS, format_number, passes_over_data


def memorized_over_late_passes(loss: pd.Series, epochs: pd.Series | None, thresholds: Thresholds) -> list[Finding]:
    """A loss logged from `memorization_epochs` passes on that fell `FELL_AFTER` x or more from there, to
    `STAIR_LEVEL` or under at the end of the log, `MANY_PASSES` passes or more into the run: each of those passes shows
    the model examples it has seen five times and more, so a fall that size there is the examples learned by heart, not
    the task (a GPT-2 over a hundred-odd tweets: 0.726 at epoch 6.25, 0.213 at 12.5, 0.142 at 18.75); or, after twice
    as many passes, a tenfold fall there to under `PRETRAINING_FLOOR` (`_late_level`). One `memorization` warning from
    where the loss went under that level to stay, or []."""
    if epochs is None or not len(epochs) or passes_over_data(epochs) < MANY_PASSES:
        return []
    epoch_of = epochs.reindex(epochs.index.union(loss.index)).ffill().reindex(loss.index).to_numpy(dtype="float64")
    late = loss[epoch_of >= thresholds.memorization_epochs]
    if len(late) < 2:
        return []
    k = max(1, len(loss) // 10)  # (the first and last tenth's medians: one batch is no level)
    head, tail = float(np.median(late.iloc[:max(1, len(late) // 10)])), float(np.median(loss.iloc[-k:]))
    level = _late_level(head, tail, passes_over_data(epochs))
    start = None if level is None else settled_from(loss, level)
    if start is None:
        return []
    first, last = int(loss.index[start]), int(loss.index[-1])
    where = f"at step {last}" if first == last else f"from step {first} to step {last}"
    message = (f"the loss was {format_number(head)} at step {int(late.index[0])} (epoch "
               f"{format_number(float(epoch_of[loss.index.get_loc(late.index[0])]))}, every example already seen "
               f"{format_number(thresholds.memorization_epochs)} times or more) and fell to {format_number(tail)} by "
               f"the end of the log ({format_number(head / tail)}x lower, under {format_number(level)} {where}, "
               f"{format_number(passes_over_data(epochs))} passes), and no eval loss was logged: "
               "a fall that size on examples seen that often is the training data learned by heart (memorization). "
               "Log an eval loss to see whether the model still generalises; fewer epochs or more data if it does not.")
    return [Finding("memorization", "warning", first, message, end_step=last, metric=LOSS, evidence={
        "head": head, "value": tail, "level": level, "eval_loss_logged": False, "to_end": True,
        "settled_step": first, "late_passes": True})]


_MORE_PASSES = 2 * MANY_PASSES  # after this many passes over the same examples ...
_TENFOLD = 10.0  # ... a fall this many times over the late passes is memorized at `PRETRAINING_FLOOR`


def _late_level(head: float, tail: float, passes: float) -> float | None:
    """The level under which a loss that fell from `head` (its level once every example had been seen
    `memorization_epochs` times) to `tail` over `passes` passes is memorized: `STAIR_LEVEL` after a `FELL_AFTER` x
    fall; `PRETRAINING_FLOOR` after a `_TENFOLD` fall over `_MORE_PASSES` passes or more (vvud_notebooks: a 7B chat
    model's QLoRA over 13 rows, 3.47 at epoch 6.25 -> 0.245 at 25, 14x); None where neither holds.

    Calibrated on the corpus's healthy-judged runs with no held-out loss whose loss ends under 0.5 after 10 passes or
    more, none of which fell tenfold over the late passes (late-pass head -> tail): YYYYXL1004_NLP2 (21 passes,
    4.005 -> 0.483, 8.3x, the nearest), sehbeygi79_Medical-QA-RAG (21, 0.302 -> 0.228), AnikaTha_ChatMD (20,
    0.148 -> 0.142), Time-MoE_issue70 (35, 0.066 -> 0.056), factoryfist-wq_gpt2-text-generation (10, 0.745 -> 0.384),
    adu3110 (15.4, 0.084 -> 0.073), abhigyas_iic (13.2, an RL loss near 0); and above 0.5 after hundreds of passes,
    Gregorgeous_ula-transformer (200, 1.972 -> 0.423, 4.7x), guoxinyue1112_MathLM (1000, 3.322 -> 0.789, 4.2x)."""
    if not 0 < tail:
        return None
    if tail <= STAIR_LEVEL and head >= FELL_AFTER * tail:
        return STAIR_LEVEL
    if passes >= _MORE_PASSES and tail <= PRETRAINING_FLOOR and head >= _TENFOLD * tail:
        return PRETRAINING_FLOOR
    return None
