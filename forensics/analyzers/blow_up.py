"""Divergence read from grad_norm: a blow-up of the gradients the run never came back from, though the loss fell part
of the way back (`unrecovered_blow_up`), and a log with no per-step loss whose closing mean loss is beyond any
cross-entropy (`exploded_run_mean`). Rules of divergence.py, which calls these where its loss-only rules find no
many-fold rise that stayed."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .loss_trend import MIN_POINTS, START_POINTS, restart_near, smoothed, tail_points
from .metrics import EXPLODED_LOSS, GRAD_NORM, LOSS, TRAIN_LOSS, Metrics, finite, format_number, position_of
from .no_training_loss import summary_at_step_zero

_BLOWN = 10.0  # grad_norm this many times its early level has blown up ...
_WORSE = 1.25  # ... and a loss that ends this many times its level before that never recovered


def exploded_run_mean(metrics: Metrics) -> list[Finding]:
    """A log with no per-step loss whose closing `train_loss` (the mean of every step's loss) is above
    `EXPLODED_LOSS`, a value no per-token cross-entropy takes: the loss blew up somewhere in the run. An error at
    the summary's step (the log cannot say where it began)."""
    summary = finite(metrics.get(TRAIN_LOSS, pd.Series(dtype="float64")))
    if summary.empty or float(summary.iloc[-1]) <= EXPLODED_LOSS or summary_at_step_zero(metrics):
        return []  # (at step 0 no update ran: the summed loss over a step count floored at 0.001, no mean)
    step, value = int(summary.index[-1]), float(summary.iloc[-1])
    message = (f"no per-step loss was logged, but the closing train_loss (the mean of every step's loss) is "
               f"{format_number(value)}, far above what a per-token cross-entropy takes (a uniform guess over any "
               f"vocabulary is under 13): the loss blew up during the run, by step {step} at the latest. Log the loss "
               "every few steps (logging_steps) to see where; check the precision (a model loaded in float16 and "
               "trained without mixed precision overflows), the learning rate and the data.")
    return [Finding("divergence", "error", step, message, end_step=step, metric=TRAIN_LOSS,
                    evidence={"train_loss": value, "no_step_loss": True})]


def unrecovered_blow_up(metrics: Metrics, loss: pd.Series, thresholds: Thresholds) -> list[Finding]:
    """A blow-up the run never came back from, though the loss fell part of the way: grad_norm jumps to
    `_BLOWN` x its early level and is still there at the end (median of the last tenth), and the loss ends
    `_WORSE` x its level just before the jump. The run as it ended is worse than it was before: an error,
    from the jump. An earlier blow-up the run came all the way back from (grad_norm and loss both back at
    their level before it) is not the one dated."""
    grad = finite(metrics.get(GRAD_NORM, pd.Series(dtype="float64")))
    if len(grad) < 4 * START_POINTS or len(loss) < 4 * START_POINTS:
        return _short_unrecovered_blow_up(grad, loss, metrics, thresholds)
    k = max(START_POINTS, len(grad) // 10)
    early = float(grad.iloc[:k].median())
    if early <= 0 or float(grad.iloc[-k:].median()) < _BLOWN * early:
        return []
    found = _blow_up_not_come_back_from(grad, loss, _BLOWN * early, max(START_POINTS, len(loss) // 10))
    if found is None:
        return []
    jump, level = found
    end_level = float(loss.iloc[-max(START_POINTS, len(loss) // 10):].median())
    if level <= 0 or end_level < _WORSE * level or end_level - level < thresholds.divergence_min_rise \
            or restart_near(metrics, loss, position_of(loss, jump)):
        return []
    rise = _loss_leaves(loss, jump, _WORSE * level)
    message = (f"loss diverges from step {rise}" + (f", after grad_norm blew up at step {jump}" if rise != jump else
                                                   ", where grad_norm blew up") +
               f" ({format_number(float(grad.loc[jump]))}, {format_number(float(grad.loc[jump]) / early)}x its early "
               f"level {format_number(early)}), and the run never came back: the loss ends at about "
               f"{format_number(end_level)} against {format_number(level)} before "
               f"({format_number(end_level / level)}x) and grad_norm is still about "
               f"{format_number(float(grad.iloc[-k:].median()))} at the end. The weights at the end are worse than "
               f"before step {jump}.")
    evidence = {"floor": level, "floor_step": int(loss.index[loss.index < jump][-1]), "end_level": end_level,
                "peak": float(loss.max()),
                "factor": end_level / level, "n_points": int((loss.index >= jump).sum()), "grad_norm_early": early,
                "grad_norm_end": float(grad.iloc[-k:].median())}
    evidence["grad_norm_jump_step"] = jump
    return [Finding("divergence", "error", rise, message, end_step=int(loss.index[-1]), metric=LOSS, evidence=evidence)]


def _short_unrecovered_blow_up(grad: pd.Series, loss: pd.Series, metrics: Metrics,
                               thresholds: Thresholds) -> list[Finding]:
    """`_unrecovered_blow_up` on a log too short for its medians (under 20 points, each the mean of many steps):
    grad_norm jumps to `_BLOWN` x its first two points and never comes back under it, and the loss since the jump
    (its median) and at its end (the median of the last points) is `divergence_factor` x the lowest it reached
    before the jump (a stricter bar than the long log's, as the low is a single point here). crystal-text-llm issue 6: a
    pasted 11 lines, grad_norm 0.25 -> 7-23 and loss 0.48 -> 0.82-0.89 at a learning rate of 5e-4."""
    if len(grad) < MIN_POINTS or len(loss) < MIN_POINTS:
        return []
    early = float(grad.iloc[:2].median())
    limit = _BLOWN * early
    blown = np.flatnonzero(grad.to_numpy(dtype="float64") > limit)
    if early <= 0 or not len(blown) or not (grad.iloc[int(blown[0]):] > limit).all():
        return []
    jump = int(grad.index[int(blown[0])])
    before, after = loss[loss.index < jump], loss[loss.index >= jump]
    tail = tail_points(len(loss), thresholds)
    if len(before) < 2 or len(after) < 2 * tail:
        return []
    low, since, end_level = float(before.min()), float(after.median()), float(after.iloc[-tail:].median())
    bar = thresholds.divergence_factor * low
    if low <= 0 or since < bar or end_level < bar or end_level - low < thresholds.divergence_min_rise \
            or restart_near(metrics, loss, position_of(loss, jump)):
        return []
    rise = _loss_leaves(loss, jump, _WORSE * low)
    message = (f"loss diverges from step {rise}, as grad_norm blew up at step {jump} "
               f"({format_number(float(grad.loc[jump]))}, {format_number(float(grad.loc[jump]) / early)}x its first "
               f"points' {format_number(early)}) and never came back down: the loss ends at about "
               f"{format_number(end_level)} against a low of {format_number(low)} before "
               f"({format_number(end_level / low)}x). A short log ({len(loss)} points), but every point since the "
               f"jump says the same.")
    evidence = {"floor": low, "floor_step": int(before.idxmin()), "end_level": end_level, "peak": float(after.max()),
                "factor": end_level / low, "n_points": len(after), "grad_norm_early": early,
                "grad_norm_end": float(grad.iloc[-tail:].median()), "grad_norm_jump_step": jump, "short_log": True}
    return [Finding("divergence", "error", rise, message, end_step=int(loss.index[-1]), metric=LOSS, evidence=evidence)]


def _loss_leaves(loss: pd.Series, jump: int, bar: float) -> int:
    """The first step at or after the grad_norm jump where the smoothed loss is above `bar`: where the loss itself
    left its level (a blow-up of the gradients can come some way ahead of it); the jump where it never is."""
    after = loss[loss.index >= jump]
    above = np.flatnonzero(smoothed(after.to_numpy(dtype="float64")) > bar)
    return int(after.index[above[0]]) if len(above) else jump


_BACK = 1.05  # a loss within this x its level before a blow-up has come back from it


def _blow_up_not_come_back_from(grad: pd.Series, loss: pd.Series, limit: float, k: int) -> tuple[int, float] | None:
    """(step, loss level just before it) of the first grad_norm above `limit` that the run did not come all
    the way back from: no later point where the smoothed grad_norm is under `limit` and the smoothed loss is
    within `_BACK` x the level of the `k` points before the jump. None when there is no such jump."""
    values = grad.to_numpy(dtype="float64")
    grad_back = pd.Series(smoothed(values) <= limit, index=grad.index)
    loss_level = pd.Series(smoothed(loss.to_numpy(dtype="float64")), index=loss.index)
    pos = 0
    while True:
        blown = np.flatnonzero(values[pos:] > limit)
        if not len(blown):
            return None
        jump = int(grad.index[pos + int(blown[0])])
        before = loss[loss.index < jump].iloc[-k:]
        if len(before) < START_POINTS:  # a jump in the first few points has no level before it: the next one
            pos += int(blown[0]) + 1
            continue
        level = float(before.median())
        # the loss level carried to each grad_norm step after the jump (the two may be logged at other steps)
        after = loss_level[loss_level.index > jump].reindex(grad.index[grad.index > jump], method="ffill")
        back = grad_back[grad.index > jump] & (after <= _BACK * level)
        if not back.any():
            return jump, level
        pos = grad.index.get_loc(back.idxmax()) + 1
