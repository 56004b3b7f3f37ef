"""A learning rate that falls by more than half in one logged step in the middle of a smooth decay (`falls_at_once`).

A decaying schedule (cosine, linear, polynomial) takes a fraction of a percent of the rate a step; a scheduled step
decay (StepLR, MultiStepLR, ReduceLROnPlateau) cuts it by x0.1 or x0.5 from a flat stretch and stays flat after; a
warm restart jumps up, not down. A rate that was decaying by small steps, falls to under half at once and goes on
decaying by small steps from the lower value is none of these: a resume that put the scheduler at another position
(wadkisson_Personal-Chatbot: step 6300 logged twice at a resume, 4.86e-4 then 2.09e-4 - the script added the resume
offset twice - and the cosine on from there, reaching its floor 6,300 steps early). Read on the rate's distinct
values (a rate printed to six decimals holds each one for dozens of steps), a warning at the first such fall.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..findings import Finding
from .metrics import LR, format_number

_FALL = 0.5  # the rate at or under this share of the one before, in one logged step ...
_SMOOTH_STEP = 0.05  # ... where each of its `_AROUND` changes before and after fell by under this share
_AROUND = 3


def falls_at_once(lr: pd.Series) -> list[Finding]:
    """One `lr_anomaly` warning at the first fall to under `_FALL` of the rate before, inside a smooth decay (the
    module's rule), or []."""
    values, steps = lr.to_numpy(dtype="float64"), lr.index.to_numpy()
    if len(values) < 2 * _AROUND + 2:
        return []
    starts = np.concatenate([[0], np.flatnonzero(np.diff(values) != 0) + 1])  # the first point of each distinct value
    levels = values[starts]
    for k in np.flatnonzero((levels[1:] > 0) & (levels[1:] <= _FALL * levels[:-1])) + 1:
        if _decays_smoothly(levels[max(0, k - 1 - _AROUND):k]) and _decays_smoothly(levels[k:k + _AROUND + 1]):
            before, after, at = float(levels[k - 1]), float(levels[k]), int(steps[starts[k]])
            message = (f"learning rate falls at once from {format_number(before)} to {format_number(after)} at step "
                       f"{at} ({1 - after / before:.0%} in one step) in the middle of a smooth decay, which goes on "
                       "from the lower rate: no schedule does this (a step decay cuts a flat rate, a restart jumps "
                       "up). A resume that put the scheduler at another position (a step offset counted twice, "
                       "another max_steps) does: the rest of the run trains at lower rates than planned and reaches "
                       "the schedule's floor early. Check the scheduler's step after the resume.")
            return [Finding("lr_anomaly", "warning", at, message, metric=LR, evidence={
                "before": before, "after": after, "fell_at_once": True, "schedule_shape": True})]
    return []


def _decays_smoothly(levels: np.ndarray) -> bool:
    """Whether consecutive distinct rates fall `_AROUND` times, each by under `_SMOOTH_STEP` of the one before."""
    if len(levels) < _AROUND + 1:
        return False
    ratios = levels[1:] / levels[:-1]
    return bool(np.all((ratios < 1) & (ratios > 1 - _SMOOTH_STEP)))
