"""A sustained step up: the training loss steps up clearly, short of many-fold, and stays up to the end of the log.

`detect_divergence` calls a loss that rises many-fold (1.5x) over its low and stays there an error. A smaller rise
can say the same of the run as it ended, when it is a step and not noise: the loss held a level, then moved to one
`_STEP_UP` higher or more within a window, far out of its own noise (`_STEP_Z` standard errors of a window's mean),
and every window after is still up (none back under half the rise) to the end of the log, while the part before it
did not climb like this (a loss drifting up all along is not a step). On fresh batches of one distribution (a
first pass over a large data set) such a step means the updates made the model fit its own data worse: a
`divergence` warning (not broken: the end is not many-fold worse), dated where the step begins. A loss that steps up
at a new epoch or a new data mixture and comes back is not held to the end; one that steps up at a restart of the
learning-rate schedule is a new phase, left alone. A log of epoch means, too short for windows, is read epoch by
epoch (`_epoch_means_climbed`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..findings import Finding
from .metrics import (LOSS, Metrics, a_or_an, finite, format_number, lr_restart_steps, point_noise, real_loss,
                      restart_near)

_MIN_POINTS = 60  # points a log needs for window means either side of a step (at least 2 windows each side)
_WINDOWS = 12  # a window is this share of the log (at least `_MIN_WINDOW` points) ...
_MIN_WINDOW = 5
_STEP_UP = 0.15  # the level after the step is at least this much (relative) above the level held before it ...
_STEP_Z = 6.0  # ... and this many standard errors of a window's mean above it
_HELD = 0.5  # every window after the step stays above the level before + this share of the rise
_EARLIER_CLIMB = 0.5  # the windows before the step climbed less than this share of the rise over their own lowest


def detect_sustained_step_up(metrics: Metrics) -> list[Finding]:
    """One `divergence` warning from the step where the loss stepped up and stayed up (see the module), or []."""
    loss = real_loss(metrics) if LOSS in metrics else pd.Series(dtype="float64")
    if len(loss) < _MIN_POINTS:
        return _epoch_means_climbed(metrics, loss)
    values = loss.to_numpy(dtype="float64")
    width = max(_MIN_WINDOW, len(values) // _WINDOWS)
    split = _best_split(values, width)
    if split is None:
        return []
    before, after = _level_before(values, split, width), float(np.mean(values[split:]))
    rise = after - before
    noise = point_noise(values[:split]) / np.sqrt(width)  # the standard error of a window's mean
    if before <= 0 or rise < _STEP_UP * before or rise < _STEP_Z * noise:
        return []
    if not _held_to_the_end(values[split:], width, before + _HELD * rise) \
            or _climbed_before(values[:split], width, _EARLIER_CLIMB * rise) or _at_a_restart(metrics, loss, split):
        return []
    step = int(loss.index[split])
    end = float(np.mean(values[-width:]))
    message = (f"the loss steps up from step {step} and stays up: about {format_number(before)} before, "
               f"{format_number(after)} on average after ({format_number(after / before)}x, "
               f"{format_number(rise / noise if noise > 0 else float('inf'))} standard errors of "
               f"{a_or_an(str(width))}-point mean), every {width}-point window since above "
               f"{format_number(before + _HELD * rise)}, "
               f"{format_number(end)} over the last. Not many-fold, but the model fits its training data worse at the "
               "end than before the step; on fresh batches of one data set that is the updates doing harm (a "
               "learning rate too high for the adapter or model, an optimizer state gone bad). Look at what changed "
               "at that step (data order, sequence lengths, the schedule) and compare a checkpoint from before it.")
    return [Finding("divergence", "warning", step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"floor": before, "floor_step": int(loss.index[max(0, split - 1)]), "end_level": end,
                              "mean_after": after, "factor": after / before, "n_points": len(values) - split,
                              "step_up": True})]


def _best_split(values: np.ndarray, width: int) -> int | None:
    """The position where the log splits into two parts whose means differ most upward, in standard errors (a
    two-sample t over every split with two windows each side); None where no split has the later part higher."""
    n = len(values)
    positions = np.arange(2 * width, n - 2 * width + 1)
    if not len(positions):
        return None
    cumulative = np.concatenate([[0.0], np.cumsum(values)])
    mean_before = cumulative[positions] / positions
    mean_after = (cumulative[n] - cumulative[positions]) / (n - positions)
    score = (mean_after - mean_before) * np.sqrt(positions * (n - positions) / n)
    best = int(np.argmax(score))
    return int(positions[best]) if score[best] > 0 else None


def _level_before(values: np.ndarray, split: int, width: int) -> float:
    """The level the loss held just before the step: the median of the last two windows before it."""
    return float(np.median(values[max(0, split - 2 * width):split]))


def _window_means(values: np.ndarray, width: int) -> np.ndarray:
    """Means of consecutive `width`-point windows (the last one takes the remainder, if any is left)."""
    return np.array([float(np.mean(values[i:i + width])) for i in range(0, len(values), width)
                     if len(values[i:i + width]) >= max(2, width // 2)])


def _held_to_the_end(after: np.ndarray, width: int, bar: float) -> bool:
    """Every window from the step to the end of the log is above `bar`: the loss did not come back."""
    means = _window_means(after, width)
    return bool(len(means) >= 2 and np.all(means > bar))


def _climbed_before(before: np.ndarray, width: int, climb: float) -> bool:
    """The windows before the step climbed by `climb` or more over the lowest of them: a loss drifting up all along,
    not one that held a level and stepped off it."""
    means = _window_means(before, width)
    return bool(len(means) and means[-1] - float(np.min(means)) >= climb)


def _at_a_restart(metrics: Metrics, loss: pd.Series, split: int) -> bool:
    """The learning-rate schedule restarted within a few logged points before the step's first point after it: a new
    phase."""
    return restart_near(loss, int(loss.index[min(split + 1, len(loss) - 1)]), lr_restart_steps(metrics), 3) is not None


_EPOCH_CLIMB = 0.1  # an epoch mean this share above the lowest one before it ...
_EPOCH_RISES = 2  # ... reached by rising at this many epochs in a row
_EPOCH_FLOOR = 0.1  # nats: a lowest epoch mean under this is near 0, where a rise of thousandths is no step


def _epoch_means_climbed(metrics: Metrics, loss: pd.Series) -> list[Finding]:
    """In a short log of the training loss's epoch means (`_once_an_epoch`), the `divergence` warning of a climb from
    the lowest mean so far that rose at `_EPOCH_RISES` or more epochs in a row to end `_EPOCH_CLIMB` above it, dated
    at the climb's first epoch, whether or not later epochs came back part of the way (a `loss_spike` warning where
    they came back under the low: IngRicardoZavala_RATCHET-ESP, 2.564 -> 3.558 over five epochs, 2.273 at the end).
    A mean over a whole pass of one data set does not move by a tenth by chance: the updates made the model fit its own
    data worse (181482's En->Zh Transformer: 1.1104 at epoch 4, then 1.2154 and 1.3259, +19%, 1.197 at the end).
    Healthy-judged epoch logs stay under it: APP201204's from-scratch transformer (epoch means falling 5.94 -> 2.08,
    each rise of up to 16% a single epoch followed by a fall), AlexCheema's GRU (15 rising epochs, +3.7%, told by
    `overfitting`); hyeonggeonkim's t5-small (0.0004 -> 0.0068, memorized from its first epoch) is under `_EPOCH_FLOOR`.
    [] else."""
    if len(loss) < _EPOCH_RISES + 2 or not _once_an_epoch(metrics, loss):
        return []
    values = loss.to_numpy(dtype="float64")
    for low in range(len(values) - _EPOCH_RISES):
        top = low
        while top + 1 < len(values) and values[top + 1] > values[top]:
            top += 1
        base = float(values[low])
        if base >= _EPOCH_FLOOR and base == float(values[:low + 1].min()) and top - low >= _EPOCH_RISES \
                and values[top] >= (1 + _EPOCH_CLIMB) * base:
            return [_epoch_climb_finding(loss, low, top)]
    return []


def _once_an_epoch(metrics: Metrics, loss: pd.Series) -> bool:
    """Whether each training loss point is one epoch's: the logged epoch at every point a whole number, one more
    than at the point before (a hand-written loop's `epoch, train_loss` table, HF's logging_strategy="epoch")."""
    epochs = finite(metrics["epoch"]).reindex(loss.index).to_numpy() if "epoch" in metrics else np.array([np.nan])
    return bool(np.all(np.isfinite(epochs)) and np.all(epochs == np.round(epochs)) and np.all(np.diff(epochs) == 1))


def _epoch_climb_finding(loss: pd.Series, low: int, top: int) -> Finding:
    values, steps = loss.to_numpy(dtype="float64"), loss.index
    base, peak, end = float(values[low]), float(values[top]), float(values[-1])
    back = (f"it is still there at the end ({format_number(end)})" if top == len(values) - 1 else
            f"it came back only part of the way ({format_number(end)} at step {int(steps[-1])}, "
            f"{format_number(end / base)}x the low)" if end > base else
            f"it came back under that low later ({format_number(end)} at step {int(steps[-1])})")
    recovered = top < len(values) - 1 and end <= base
    advice = ("The run recovered on its own: nothing to resume from; if it recurs, lower or decay the learning rate."
              if recovered else
              "Compare a checkpoint from before the rise, and lower or decay the learning rate.")
    message = (f"the training loss's epoch mean rises at each of {top - low} epochs in a row from "
               f"{format_number(base)} at step {int(steps[low])}, its lowest so far, to {format_number(peak)} at step "
               f"{int(steps[top])} ({format_number(peak / base)}x); {back}. A mean over a whole pass of the data "
               "does not move that much by chance: the updates made the model fit its own training data worse (a "
               f"learning rate too high after warm-up, no decay). {advice}")
    # VERDICTS.md: a divergence does not come back; a climb the run came back under on its own was a spike
    kind = "loss_spike" if recovered else "divergence"
    return Finding(kind, "warning", int(steps[low + 1]), message, end_step=int(steps[-1]), metric=LOSS,
                   evidence={"floor": base, "floor_step": int(steps[low]), "end_level": end, "peak": peak,
                             "factor": peak / base, "step_up": True, "epoch_means": True,
                             "recovered": recovered})
