"""Skipped fp16 updates read from a learning rate that lags its linear schedule.

DeepSpeed's fp16 loss scaler, on an overflow, skips the optimizer step and the scheduler step with it; the HF Trainer
logs no grad_norm with DeepSpeed in older releases, so the only trace of the skips is the learning rate. On a linear
decay with no warm-up (`get_linear_schedule_with_warmup`, warm-up 0) the rate after k scheduler steps is
peak x (1 - k / T): read back, each logged rate says how many scheduler steps were taken, k = T x (1 - lr / peak),
and the step it was logged at less k is the number of updates skipped so far (its lag). T is read from the log itself:
the rate falls by peak / T a step wherever no update was skipped, which is most logging intervals (the median fall).

Read only where that holds: a linear schedule, no warm-up, the peak stated (`learning_rate`), fp16 on, no grad_norm
logged (where it is, its non-finite values tell the skips one by one: `skipped_steps`), the rate falling at every
logged point (no restart), logged at most every `_MAX_SPACING` steps, and every lag within `_ON_A_STEP` of a whole
number of steps and never going back (else the schedule is not the one read, or the rate was printed rounded). A lag
of `_MIN_LAG` steps or more is reported: 0 or 1 is a run on its schedule (1: a rate logged before its step's scheduler
step), and a few more are a fresh scaler calibrating (from 2**16 it halves on each overflow: a few skips at the start
are expected of it, and from the rate alone they cannot be placed). The lag must also grow by `_MIN_LAG` after the
first logged point: a lag the same from there on is as well a warm-up the Trainer's arguments do not show (a DeepSpeed
config's WarmupDecayLR in place of the Trainer's linear schedule).

    detect_skips_from_lr_lag(metrics, schedule)   # schedule: LinearSchedule or None -> [] or one `skipped_steps`
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..findings import Finding, plural
from .metrics import GRAD_NORM, LR, Metrics, finite

_MAX_SPACING = 50  # logged steps apart, at most: wider, a skip-free interval is too rare to read the slope from
_MIN_POINTS = 10
_ON_A_STEP = 0.25  # a lag this close to a whole number of steps (the rate read back as a step count)
_ON_A_STEP_SHARE = 0.9  # ... at this share of the points at least
_MIN_LAG = 5  # steps behind the schedule reported as skipped updates (module docstring)


@dataclass(frozen=True)
class LinearSchedule:
    """A linear decay from `peak` with no warm-up, of a run in fp16 (the only kind whose scaler skips updates)."""

    peak: float


def linear_fp16_schedule(config) -> LinearSchedule | None:
    """The schedule `detect_skips_from_lr_lag` can read from a RunConfig, or None (module docstring)."""
    fp16 = config.get("fp16") is True or config.get("ds.fp16.enabled") is True
    warmup = any(isinstance(config.get(k), (int, float)) and config.get(k) > 0
                 for k in ("warmup_steps", "warmup_ratio"))
    peak = config.get("learning_rate")
    if not fp16 or warmup or config.get("lr_scheduler_type") != "linear" or not isinstance(peak, (int, float)):
        return None
    return LinearSchedule(float(peak)) if peak > 0 else None


def detect_skips_from_lr_lag(metrics: Metrics, schedule: LinearSchedule | None) -> list[Finding]:
    """One `skipped_steps` warning where the logged learning rate lags its linear schedule by `_MIN_LAG` steps or more
    (module docstring), or []."""
    lr = finite(metrics[LR]) if LR in metrics and GRAD_NORM not in metrics and schedule is not None else None
    if lr is None or len(lr) < _MIN_POINTS:
        return []
    steps, values = lr.index.to_numpy(dtype="float64"), lr.to_numpy(dtype="float64")
    gaps, falls = np.diff(steps), -np.diff(values)
    if gaps.max() > _MAX_SPACING or (falls <= 0).any() or values.max() > schedule.peak * (1 + 1e-6):
        return []
    total = schedule.peak / float(np.median(falls / gaps))  # T: the schedule's length, from its skip-free fall
    lag = steps - total * (1 - values / schedule.peak)
    whole = np.abs(lag - np.round(lag)) <= _ON_A_STEP
    if whole.mean() < _ON_A_STEP_SHARE or (np.diff(lag) < -_ON_A_STEP).any() or lag.max() < _MIN_LAG \
            or lag.max() - lag[0] < _MIN_LAG:
        return []
    return [_finding(steps, lag, total, schedule)]


def _finding(steps: np.ndarray, lag: np.ndarray, total: float, schedule: LinearSchedule) -> Finding:
    behind = np.round(lag).astype(int)
    first = int(np.flatnonzero(behind >= _MIN_LAG)[0])
    grew = [int(steps[i]) for i in range(first + 1, len(steps)) if behind[i] > behind[i - 1]]
    later = (f"; it fell further behind by step {', '.join(map(str, grew[:6]))}{' ...' if len(grew) > 6 else ''}"
             if grew else "")
    message = (f"the learning rate lags its linear schedule (peak {schedule.peak:g}, about {total:.0f} steps, no "
               f"warm-up) by {plural(int(behind[first]), 'step')} at step {int(steps[first])} and "
               f"{plural(int(behind[-1]), 'step')} at the last logged step {int(steps[-1])}{later}: the scheduler "
               "did not step with every update, as the fp16 loss scaler skips optimizer and scheduler steps on an "
               "overflow. Those updates did not happen (log grad_norm to see each skip).")
    return Finding("skipped_steps", "warning", int(steps[first]), message, end_step=int(steps[-1]), metric=LR,
                   evidence={"count": int(behind[-1]), "schedule_steps": round(total), "lag_first": int(behind[first]),
                             "from_lr_schedule": True})
