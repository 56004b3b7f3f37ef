"""Spike episodes in a noisy series, judged against a robust rolling baseline.

The baseline at a point is the median of the `window` finite points before it, its spread
the MAD (scaled by 1.4826 to match a standard deviation on normal noise). A point is a spike
when it is more than `factor` times the baseline AND more than `mad_z` robust deviations above
it: the factor keeps a calm series (tiny MAD) from flagging small bumps, the z-score keeps a
noisy one from flagging its ordinary swings. Medians ignore the spike itself, so one spike
does not raise the bar for the next. Before `min_history` points only a jump of
`early_factor` (with at least one point to compare) counts, or, where the rule judges early points
against the whole series (`early_whole`), a point past the first two that stands `factor` x over
every point before it and `factor` x and `mad_z` robust deviations over the median of all the
series' other points, where the points before it stand at that level: a few points are too few a
baseline alone, the run's later points say what its level is. A first or second point that is high and falls away is the
start-up of training, never a spike.

An episode lasts until the series is back under `recover_factor` x baseline for
`recover_points` points in a row (fewer if the log ends first); then it is recovered. A
series still high `window` points later has moved to a new level: the episode ends there
unrecovered and the scan goes on against the new level, so a later, bigger blow-up is still
found on its own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class SpikeRule:
    window: int
    min_history: int
    factor: float
    mad_z: float
    recover_factor: float
    recover_points: int
    early_factor: float | None = None
    early_whole: bool = False  # an early point is also judged against the median of the whole series without it


@dataclass(frozen=True)
class Spike:
    """One spike episode: where it started, how big it got, and whether the series came back."""

    step: int
    value: float
    baseline: float
    factor: float
    peak: float
    peak_step: int
    end_step: int
    recovered: bool
    recovered_at: int | None
    position: int  # 0-based position of `step` among the finite points
    last_step: int  # the series' last finite step (to tell "never came back" from "settled higher")
    end_position: int = 0


def find_spikes(series: pd.Series, rule: SpikeRule) -> list[Spike]:
    """Every spike episode in the finite points of `series`, in step order."""
    series = series[np.isfinite(series.to_numpy())]
    values, steps = series.to_numpy(dtype="float64"), series.index.to_numpy()
    spikes, i = [], 0
    for j in np.flatnonzero(_could_be_spike(values, rule)).tolist():
        if j < i:
            continue  # inside the episode just found
        baseline = _baseline_if_spike(values, j, rule)
        if baseline is None:
            continue
        spike, i = _episode(values, steps, j, baseline, rule)
        spikes.append(spike)
    return spikes


def _could_be_spike(values: np.ndarray, rule: SpikeRule) -> np.ndarray:
    """Points above the lowest spike factor x the median of the window before them (vectorized).

    A cheap superset of the spikes (the slack covers rounding), so the exact per-point check
    runs on a few candidates instead of on every point of a million-entry log.
    """
    before = pd.Series(values).rolling(rule.window, min_periods=1).median().shift(1).to_numpy()
    lowest = min(rule.factor, rule.early_factor or rule.factor)
    with np.errstate(invalid="ignore"):
        return values > lowest * before * (1 - 1e-9)  # the first point (no history) compares False


def _baseline_if_spike(values: np.ndarray, i: int, rule: SpikeRule) -> float | None:
    """The baseline when values[i] is a spike over it, else None."""
    history = values[max(0, i - rule.window):i]
    if len(history) == 0:
        return None
    median = float(np.median(history))
    if median <= 0:
        return None  # a zero baseline (DeepSpeed's 0.0 before the first step) gives no scale
    if len(history) < rule.min_history:
        if rule.early_factor and values[i] > rule.early_factor * median:
            return median
        return _over_whole_series(values, i, rule) if rule.early_whole else None
    spread = MAD_TO_SIGMA * float(np.median(np.abs(history - median)))
    above = values[i] - median
    z = np.inf if spread == 0 else above / spread
    return median if values[i] > rule.factor * median and z > rule.mad_z else None


_START_UP = 2  # the first points of a series: high and falling away is training starting, not a spike


def _over_whole_series(values: np.ndarray, i: int, rule: SpikeRule) -> float | None:
    """The median of all the series' other points when values[i], an early point past the first `_START_UP`, stands
    `factor` x over every point before it and is a spike (`factor` x and `mad_z` robust deviations) over that
    median; else None. Needs `min_history` other points, and the points before it at the level of the rest (their
    median within `recover_factor` x the others'): a series that starts high and falls many-fold has no one
    baseline for its first points."""
    others = np.delete(values, i)
    if i < _START_UP or len(others) < rule.min_history or values[i] <= rule.factor * float(np.max(values[:i])):
        return None
    median = float(np.median(others))
    if median <= 0 or float(np.median(values[:i])) > rule.recover_factor * median:
        return None  # the points before it stand at a level the run left later: no common baseline
    spread = MAD_TO_SIGMA * float(np.median(np.abs(others - median)))
    z = np.inf if spread == 0 else (values[i] - median) / spread
    return median if values[i] > rule.factor * median and z > rule.mad_z else None


def _episode(values: np.ndarray, steps: np.ndarray, i: int, baseline: float, rule: SpikeRule) -> tuple[Spike, int]:
    """The episode starting at i; returns it and the position to resume scanning from."""
    limit = rule.recover_factor * baseline
    j, recovered_at = i + 1, None
    horizon = min(len(values), i + rule.window)  # past this, the high level is the new normal
    while j < horizon:
        if values[j] <= limit:
            calm = values[j:j + rule.recover_points]
            if np.all(calm <= limit):
                recovered_at = j
                break
        j += 1
    stop = recovered_at if recovered_at is not None else horizon
    peak_pos = i + int(np.argmax(values[i:stop]))
    spike = Spike(
        step=int(steps[i]), value=float(values[i]), baseline=baseline, factor=float(values[i] / baseline),
        peak=float(values[peak_pos]), peak_step=int(steps[peak_pos]), end_step=int(steps[stop - 1]),
        recovered=recovered_at is not None, recovered_at=int(steps[recovered_at]) if recovered_at is not None else None,
        position=i, last_step=int(steps[-1]), end_position=stop - 1,
    )
    return spike, stop


def group_spikes(spikes: list[Spike], gap_points: int) -> list[list[Spike]]:
    """Spikes bunched into groups: the next one starting within `gap_points` points of the last one's end joins it.

    A group of several is a spike storm: an unstable stretch reported once, not spike by spike.
    """
    groups: list[list[Spike]] = []
    for spike in spikes:
        if groups and spike.position - groups[-1][-1].end_position <= gap_points:
            groups[-1].append(spike)
        else:
            groups.append([spike])
    return groups


def largest(group: list[Spike]) -> Spike:
    """The spike of a group that rose highest above its own baseline."""
    return max(group, key=lambda s: s.peak / s.baseline)


def group_evidence(group: list[Spike]) -> dict:
    """The numbers behind a spike or a storm: its largest spike, whether the last one settled, and when."""
    big, last = largest(group), group[-1]
    evidence = {
        "baseline": big.baseline, "value": big.value, "factor": big.peak / big.baseline, "peak": big.peak,
        "peak_step": big.peak_step, "recovered": last.recovered, "recovered_at": last.recovered_at,
        "position": group[0].position, "n_spikes": len(group),
    }
    if len(group) > 1:
        evidence["spike_steps"] = [s.step for s in group[:50]]
    return evidence


def aftermath(last: Spike) -> str:
    """How the (last) spike ended, as a clause."""
    if last.recovered:
        return f"back to normal from step {last.recovered_at}"
    if last.end_step == last.last_step:
        return "never back to normal before the log ends"
    return f"still high at step {last.end_step}"
