"""Learning-rate anomalies: a rate that leaps above anything its schedule reached, or sits at 0.

A schedule warms up, holds, decays, maybe restarts -- but never to more than its own peak.
A logged rate more than `lr_jump_factor` times the highest rate logged before it is a jump
outside the schedule (a resume with another rate, a misread config: 0.0028 -> 5.0), unless
every rate so far rose step by step: that is the warm-up ramp, logged sparsely. A rate of
exactly 0 for at least `lr_zero_points` logged points (and at least a tenth of the log) in the
middle of the run means no update was made there. Both are warnings: the owner should know,
and a jump is also where a divergence that follows it started.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import LR, Metrics, finite, format_number, true_runs


def detect_lr_anomalies(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`lr_anomaly` warnings: jumps above the schedule's own peak, and long stretches at 0."""
    lr = metrics.get(LR)
    if lr is None:
        return []
    lr = finite(lr)
    return _jumps(lr, thresholds) + _zero_stretches(lr, thresholds)


def _jumps(lr, thresholds: Thresholds) -> list[Finding]:
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    if len(values) < 2:
        return []
    peak_before = np.maximum.accumulate(values)[:-1]
    ratio = np.divide(values[1:], peak_before, out=np.zeros(len(values) - 1), where=peak_before > 0)
    out = []
    for i in np.flatnonzero(ratio > thresholds.lr_jump_factor) + 1:
        if np.all(np.diff(values[:i + 1]) > 0):
            continue  # still the warm-up ramp from near 0 (1e-9 at step 1, 1e-8 at step 10): not a jump
        message = (f"learning rate jumps from {format_number(values[i - 1])} to {format_number(values[i])} at step {int(steps[i])}, "
                   f"{format_number(ratio[i - 1])}x the highest rate logged before: outside any warm-up or schedule "
                   "(a resume with another rate, or a misread setting?).")
        out.append(Finding("lr_anomaly", "warning", int(steps[i]), message, metric=LR,
                           evidence={"before": float(values[i - 1]), "after": float(values[i]),
                                     "peak_before": float(peak_before[i - 1]), "factor": float(ratio[i - 1])}))
    return out


def _zero_stretches(lr, thresholds: Thresholds) -> list[Finding]:
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    positive = np.flatnonzero(values > 0)
    if len(positive) == 0:
        return []
    out = []
    need = max(thresholds.lr_zero_points, len(values) // 10)
    for i, j in true_runs(values == 0):
        inside = positive[0] < i and j <= positive[-1]  # not the warm-up start, not the schedule's end
        if inside and j - i >= need:
            message = (f"learning rate is exactly 0 from step {int(steps[i])} to step {int(steps[j - 1])} "
                       f"({j - i} logged points) in the middle of the run: no update was made there.")
            out.append(Finding("lr_anomaly", "warning", int(steps[i]), message, end_step=int(steps[j - 1]),
                               metric=LR, evidence={"n_points": j - i}))
    return out
