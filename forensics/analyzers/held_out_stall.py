"""The eval loss against the training loss over evaluation intervals, and the long stall of a held-out loss.

`overfitting` compares the training loss where the eval loss was at its best with where it went later: the training
losses of an evaluation interval (`interval_ending`), the levels at the best and after it (`train_levels_around`), and
how far the evals after the best sit above it (`median_rise_clears`). `stalled_overfit` is one of its rules: a held-out
loss that never got back to its best over many evaluations while the training loss fell by a fifth, the `overfitting`
warning dated at the first eval after that best; or one that gained next to nothing over the last third of a long
log of evaluations while the training loss fell by a fifth (`_plateau_while_train_fell_away`).
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .eval_levels import NOISE_UNITS
from .metrics import format_number, format_ratio, point_noise


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


_PLATEAU_GAIN = 0.01  # the evals of the last third got this share or less under the best before them ...
_PLATEAU_SHARE = 3  # ... the last third (1 / this) of the evals, `_PLATEAU_EVALS` or more of them
_PLATEAU_EVALS = 8
_PLATEAU_NOISE = 0.01  # ... and a plateau is flat: the last third's point-to-point noise this share of the best or less


def _plateau_while_train_fell_away(evals, train, thresholds: Thresholds) -> tuple[int, float, float] | None:
    """The best eval's position when the held-out loss gained `_PLATEAU_GAIN` or less over the last third of the
    evals (`_PLATEAU_EVALS` or more: its lowest there against its lowest before), its best is not the last eval and
    every eval after the best sits above it, while the training loss fell `_STALL_FELL` or more over that third (its
    level over the interval ending where the third begins against the last three points). A plateau that long is no
    lull of a still-learning model when the seen data's loss drops a fifth beside it: the gap between the two grew
    however little the evals after the best rose (iug-htw's GPT on Jane Austen: val 5.60-5.67 for the last 22 of 48
    evaluations, 0.7% above its best by their median, while train fell 4.40 -> 3.09). The bars leave the corpus's
    healthy plateaus alone (and a plateau is flat: its noise `_PLATEAU_NOISE` of the best or less, iug-htw's
    0.15%): too few evals (Jaong's continued pre-training, 9; lifestrugglee's DPO, 16) or a training
    loss that fell less (kmilink's OpenNMT, 15%; wangd12rpi's FinLoRA sentiment, 16%); and the fall is `NOISE_UNITS` x
    the training loss's own point-to-point noise over the third or more, not two batches' luck (SHIVITG's Phi-2 QLoRA,
    its logged loss alternating 1.35 / 1.09 beside a flat eval loss; alex000kim's, sinanuozdemir's and mdarshad1000's
    per-batch losses: all judged healthy, or overfitting elsewhere). (best position, the training
    loss's levels where the third began and at the end), or None."""
    values, steps = evals.to_numpy(), evals.index
    start = len(values) - len(values) // _PLATEAU_SHARE
    best_pos, best = int(np.argmin(values)), float(np.min(values[:start]))
    if len(values) - start < _PLATEAU_EVALS or best <= 0 or best_pos == len(values) - 1:
        return None
    if float(values[start:].min()) < (1 - _PLATEAU_GAIN) * best or not np.all(values[best_pos + 1:] > values[best_pos]):
        return None
    if point_noise(values[start:]) > _PLATEAU_NOISE * best:
        return None  # no plateau: a noisy eval loss (one lucky low point among single-batch evals; a swinging one)
    at_start = _at_least_three(interval_ending(train, steps, start - 1), train, steps[start - 1])
    at_end = train[train.index <= steps[-1]].iloc[-3:]
    if len(at_start) < 3 or len(at_end) < 3:
        return None
    level, later = float(at_start.median()), float(at_end.median())
    noise = point_noise(train[train.index > steps[start - 1]].to_numpy())
    fell = later <= (1 - _STALL_FELL) * level and level - later >= NOISE_UNITS * noise
    return (best_pos, level, later) if fell else None


def stalled_overfit(name: str, evals, train, thresholds: Thresholds) -> list[Finding]:
    """The `overfitting` warning of an eval loss that stalled above its best while the training loss fell away
    (`_stalled_while_train_fell_away`, `_plateau_while_train_fell_away`), dated at the first eval after the best,
    or []."""
    stall = _stalled_while_train_fell_away(evals, train, thresholds)
    stall = _plateau_while_train_fell_away(evals, train, thresholds) if stall is None else stall
    if stall is None:
        return []
    best_pos, level, later_level = stall
    values, steps = evals.to_numpy(), evals.index
    best, after = float(values[best_pos]), values[best_pos + 1:]
    end = float(np.median(after))
    best_step, last_step = int(steps[best_pos]), int(steps[-1])
    message = (f"{name} is lowest at step {best_step} ({format_number(best)}) and none of the {len(after)} "
               f"evaluations after it comes back to it (their median {format_number(end)}, "
               f"{format_ratio(end, best)}; {format_number(float(values[-1]))} at step {last_step}) while the "
               f"training loss fell from about {format_number(level)} to {format_number(later_level)}: the model fits "
               "its training data better and the held-out data no better, overfitting. The checkpoint near step "
               f"{best_step} generalises best; fewer epochs, a lower learning rate, more data or regularisation would "
               "help.")
    return [Finding("overfitting", "warning", int(steps[best_pos + 1]), message, end_step=last_step, metric=name,
                    evidence={"best_eval_loss": best, "best_step": best_step, "end_eval_loss": end})]
