"""The eval loss against the training loss over evaluation intervals, and the long stall of a held-out loss.

`overfitting` compares the training loss where the eval loss was at its best with where it went later: the training
losses of an evaluation interval (`interval_ending`), the levels at the best and after it (`train_levels_around`), and
how far the evals after the best sit above it (`median_rise_clears`). `stalled_overfit` is one of its rules: a held-out
loss that never got back to its best over many evaluations while the training loss fell by a fifth, the `overfitting`
warning dated at the first eval after that best.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import format_number, point_noise


def interval_ending(train, steps, at: int):
    """The training losses logged over the evaluation interval that ends at the eval at position `at` (from the log's
    start for the first eval)."""
    after = train.index > steps[at - 1] if at > 0 else np.ones(len(train), dtype=bool)
    return train[after & (train.index <= steps[at])]


def _at_least_three(interval, train, step: int):
    """The training losses of an evaluation interval, or, where the loss was logged as seldom as the evaluation (one
    point an interval), the last three logged up to `step`: a level to compare with, not one batch's mean."""
    return interval if len(interval) >= 3 else train[train.index <= step].iloc[-3:]


def _later_half_or_last_three(after_best):
    """The later half of the training losses logged after the best eval, or, where the loss was logged as seldom as
    the evaluation (one point an interval, so four evals after the best leave two in their later half), the last three:
    a level, not one or two batches' means (Shilpaj1994's nanoGPT on tiny Shakespeare prints 'step N: train loss T,
    val loss V' every 500 steps; val 1.4804 at its best, 2-5% above it at the four evals after while the training
    loss fell 1.07 -> 0.86)."""
    later = after_best.iloc[len(after_best) // 2:]
    return later if len(later) >= 3 else after_best.iloc[-3:]


def train_levels_around(train, steps, best_pos: int) -> tuple[float, float] | None:
    """(the training loss's level at the best eval, its level later): its median over the evaluation interval ending at
    the best (`_at_least_three`), and over the later half of the evaluations after the best
    (`_later_half_or_last_three`); None where either has fewer than three points."""
    at_best = _at_least_three(interval_ending(train, steps, best_pos), train, steps[best_pos])
    later = _later_half_or_last_three(train[train.index > steps[best_pos]])
    if len(at_best) < 3 or len(later) < 3:
        return None
    return float(at_best.median()), float(later.median())


def median_rise_clears(values: np.ndarray, best_pos: int, share: float, noise_units: float) -> bool:
    """Whether the evals after the best sit, their median, `share` of the best and `noise_units` x the eval loss's own
    point-to-point noise (in the later half of the log: its early descent is no noise) above it."""
    rise = float(np.median(values[best_pos + 1:])) - float(values[best_pos])
    return rise >= max(share * float(values[best_pos]), noise_units * point_noise(values[len(values) // 2:]))


_STALL_RISE = 0.02  # the evals after the best sit (their median) this share above it ...
_STALL_NOISE_UNITS = 2.5  # ... and this many times the eval loss's own point-to-point noise (the later half's)
_STALL_FELL = 0.2  # while the training loss fell this share below its level at the best


def _stalled_while_train_fell_away(evals, train, thresholds: Thresholds) -> tuple[int, float, float] | None:
    """The best eval's position when every one of the 2 x (`overfit_points` + 1) or more evals after it sits above
    it, their median `_STALL_RISE` and `_STALL_NOISE_UNITS` x the eval loss's noise above it, while the training loss
    fell `_STALL_FELL` or more (its median over the later half of the evaluations after the best, against its level
    over the interval ending at the best). Eight evals and more with no new best while the model fits its training
    data a fifth better is the gap between the two growing, whether or not the best was a low among its neighbours;
    the median of that many evals wobbles less than one eval, so a smaller multiple of the noise than one eval needs
    tells it (vivekalex61's t5-small: eval 1.3816 at step 12000, then eight evals 1% to 4.5% above it, while the
    training loss fell 1.23 -> 0.94). A held-out loss that only holds its floor (alex000kim's QLoRA: 26 evals 0-7%
    above its best, 1.5 x its noise in their median) or a single-batch one whose best was a lucky batch (2.3 x:
    pranjalidatascience's MiniGPT, mdarshad1000's OpenAI fine-tune) is not taken. (best position, the training loss's
    level at the best, its later level), or None."""
    values = evals.to_numpy()
    best_pos = int(np.argmin(values))
    after, best = values[best_pos + 1:], float(values[best_pos])
    if best <= 0 or len(after) < 2 * (thresholds.overfit_points + 1) or not np.all(after > best):
        return None
    if not median_rise_clears(values, best_pos, _STALL_RISE, _STALL_NOISE_UNITS):
        return None
    levels = train_levels_around(train, evals.index, best_pos)
    return (best_pos, *levels) if levels is not None and levels[1] <= (1 - _STALL_FELL) * levels[0] else None


def stalled_overfit(name: str, evals, train, thresholds: Thresholds) -> list[Finding]:
    """The `overfitting` warning of an eval loss that stalled above its best while the training loss fell away
    (`_stalled_while_train_fell_away`), dated at the first eval after the best, or []."""
    stall = _stalled_while_train_fell_away(evals, train, thresholds)
    if stall is None:
        return []
    best_pos, level, later_level = stall
    values, steps = evals.to_numpy(), evals.index
    best, after = float(values[best_pos]), values[best_pos + 1:]
    end = float(np.median(after))
    best_step, last_step = int(steps[best_pos]), int(steps[-1])
    message = (f"{name} is lowest at step {best_step} ({format_number(best)}) and none of the {len(after)} "
               f"evaluations after it comes back to it (their median {format_number(end)}, "
               f"{format_number(end / best)}x; {format_number(float(values[-1]))} at step {last_step}) while the "
               f"training loss fell from about {format_number(level)} to {format_number(later_level)}: the model fits "
               "its training data better and the held-out data no better, overfitting. The checkpoint near step "
               f"{best_step} generalises best; fewer epochs, a lower learning rate, more data or regularisation would "
               "help.")
    return [Finding("overfitting", "warning", int(steps[best_pos + 1]), message, end_step=last_step, metric=name,
                    evidence={"best_eval_loss": best, "best_step": best_step, "end_eval_loss": end})]
