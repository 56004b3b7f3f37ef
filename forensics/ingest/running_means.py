"""A metric logged as its running mean since the epoch began, and the per-step values that mean implies.

Keras hands its callbacks, batch by batch, each metric's mean over the epoch so far (a `keras.metrics.Mean` reset at
each epoch's start; the TensorBoard callback writes those as `batch_<name>`), and a hand-written loop that logs such
a Mean to a tracker (DVCLive, a CSV) does the same. A running mean hides what the batches did: a thousand batches
into an epoch one batch moves it by a thousandth, so a collapse, a spike or memorization there cannot be seen in it.
Each value m_n is the mean of the n batches so far, so batch n itself was x_n = n m_n - (n - 1) m_(n-1).

Any series is, arithmetically, the running mean of some other one, so a series is read as a running mean only where
two things hold that a logged per-step value does not give:
- the values it implies are values the metric can take (a loss not below 0, an accuracy within [0, 1]), to the float
  rounding of what was logged (which the difference multiplies by n). A per-step loss that falls by more than its
  level over n in one step (any batch noise, a few hundred steps in) implies a negative batch;
- the implied values are far rougher than the logged ones (the median size of their second differences `_ROUGHER`
  times and more): a mean of n noisy batches is n times smoother than the batches. A smooth curve logged step by step
  (a full-batch loss on a fixed set) implies a curve as smooth as itself.
An epoch's start restarts the mean; it shows as a batch the old mean cannot have come from (below the metric's least
value, or `_WILD` times its largest), and the mean is taken to start again there. Epochs are as long as each other
and a restart jumps (`_JUMP` times the mean's last steps before it); restarts that come at uneven lengths or without
a jump are a per-step series' noise outgrowing its level, and the series is not read as a mean.
A log written to a few decimals (HF's 4 on a loss) carries half its last decimal of rounding, n times that in each
implied value: it is read as a mean only where the implied values are `_ROUGHER` times rougher than that rounding
alone makes them (a smooth loss rounded to 4 decimals holds still for a few steps, then moves by 0.0001: n times that
is a batch it never had). The implied values are held to the metric's bounds: a batch at 1e-6 in an epoch whose
mean is still 0.1 reads a few float32 roundings, n-fold, below 0, a value made by the reading, not by the run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

_MIN_POINTS = 100  # a running mean is told apart over this many consecutive steps, not fewer
_ROUGHER = 20.0  # the implied per-step values this many times rougher than the logged ones (a mean of 100+ is ~100x)
_WILD = 50.0  # an implied value this many times the largest logged one: the mean restarted (a new epoch)
_ROUNDING = 1e-6  # relative rounding of a logged value (float32 keeps ~6e-8); n times it is an implied value's error
_MIN_STRETCH = 50  # a restart closer than this many steps to the last one: not an epoch, the series is not a mean
_JUMP = 10.0  # a restart moves the logged mean this many times its median step over the stretch's second half
_MOST_DECIMALS = 6  # a log whose every value has at most this many decimals was rounded to them (float32 has ~8)


def per_step_values(steps: np.ndarray, values: np.ndarray, low: float = 0.0,
                    high: float | None = None) -> np.ndarray | None:
    """The per-step values a running mean implies (restarting where an epoch starts), or None where `values` at
    `steps` do not read as one (see the module docstring). `low` / `high`: the least / largest value the metric can
    take."""
    if len(values) < _MIN_POINTS or not np.all(np.diff(steps) == 1) or not np.all(np.isfinite(values)):
        return None
    rounding = _rounding(values)
    starts = _restarts(values, low, high, rounding)
    if starts is None:
        return None
    stretches = list(zip(starts, starts[1:] + [len(values)]))
    implied = np.concatenate([_implied(values[a:b]) for a, b in stretches])
    positions = np.concatenate([np.arange(1, b - a + 1) for a, b in stretches])
    noise = max(_roughness(values), 2 * rounding * float(np.median(positions)))
    if _roughness(implied) <= _ROUGHER * noise:
        return None
    return np.clip(implied, low, high)


def _rounding(values: np.ndarray) -> float:
    """Half the last decimal a log was written to (0.00005 for HF's 4 decimals), or 0 for one kept whole."""
    for decimals in range(_MOST_DECIMALS + 1):
        scaled = values * 10.0 ** decimals
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 0.5 * 10.0 ** -decimals
    return 0.0


def _restarts(values: np.ndarray, low: float, high: float | None, rounding: float) -> list[int] | None:
    """Where each stretch of the running mean starts (0 first), or None where the restarts come too often for
    epochs. `rounding`: half the last decimal the log was written to (0 where kept whole)."""
    scale = float(np.max(np.abs(values))) or 1.0
    starts, start = [0], 0
    for i in range(1, len(values)):
        n = i - start + 1
        batch = n * values[i] - (n - 1) * values[i - 1]
        slack = n * max(_ROUNDING * scale, 2 * rounding)
        if batch < low - slack or high is not None and batch > high + slack or abs(batch) > _WILD * scale:
            if i - start < _MIN_STRETCH:
                return None
            starts.append(i)
            start = i
    return starts if _epochs_alike(values, starts) else None


def _epochs_alike(values: np.ndarray, starts: list[int]) -> bool:
    """Whether the stretches between restarts are epochs: one length (the last may be cut short) and each restart a
    jump out of the settled mean before it."""
    lengths = np.diff(starts)
    if len(lengths) and (np.ptp(lengths) > 1 or len(values) - starts[-1] > lengths[0] + 1):
        return False
    for start, length in zip(starts[1:], lengths):
        settled = np.abs(np.diff(values[start - length // 2:start]))
        if abs(values[start] - values[start - 1]) <= _JUMP * float(np.median(settled)):
            return False
    return True


def _implied(mean: np.ndarray) -> np.ndarray:
    n = np.arange(1, len(mean) + 1, dtype="float64")
    before = np.concatenate([[0.0], mean[:-1]])
    return n * mean - (n - 1) * before


def _roughness(values: np.ndarray) -> float:
    return float(np.median(np.abs(np.diff(values, 2)))) if len(values) > 2 else 0.0


def _bounds(metric: str) -> tuple[float, float | None] | None:
    """The least and largest value a metric can take, for the metrics a running mean is undone for (a loss, an
    accuracy); None for others (a rate, a norm, a perplexity: not means Keras keeps)."""
    name = metric.lower()
    if "acc" in name:
        return 0.0, 1.0
    return (0.0, None) if "loss" in name else None


def frame_per_step(frame: pd.DataFrame, source: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """`frame` (step, metric, value, wall_time rows) with each loss and accuracy that reads as a running mean replaced
    by the per-step values it implies, and a note for each so replaced."""
    notes, out = [], frame
    for metric, rows in frame.groupby("metric", sort=False):
        bounds = _bounds(str(metric))
        if bounds is None:
            continue
        rows = rows.sort_values("step", kind="stable")
        implied = per_step_values(rows["step"].to_numpy(dtype="int64"), rows["value"].to_numpy(dtype="float64"),
                                  *bounds)
        if implied is not None:
            out = out.copy() if out is frame else out  # copied once, and only where a series is replaced
            out.loc[rows.index, "value"] = implied
            notes.append(f"{source}: {metric} is logged as its running mean since each epoch began (each value the "
                         f"mean of the steps before it, as Keras and a tracked Mean keep it); read as the per-step "
                         f"values that mean implies ({len(rows)} steps {int(rows['step'].iloc[0])} to "
                         f"{int(rows['step'].iloc[-1])})")
    return out, tuple(notes)
