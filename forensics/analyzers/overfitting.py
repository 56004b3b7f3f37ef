"""Overfitting: the eval loss climbs well above its best while the training loss keeps falling.

A warning (VERDICTS.md lists memorization, its extreme): the weights are finite and training
"works", but the checkpoints after the eval minimum generalise worse. It fires when the last
`overfit_points` eval losses all sit more than `overfit_rise` above the best eval loss before
them (the message says whether the training loss kept falling: overfitting proper).
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, finite, format_number, real_loss

EVAL_LOSS = "eval_loss"


def detect_overfitting(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `overfitting` warning from the step of the best eval loss, or []."""
    evals = finite(metrics.get(EVAL_LOSS, real_loss(metrics).iloc[:0]))
    k = thresholds.overfit_points
    if len(evals) < k + 2 or LOSS not in metrics:
        return []
    values = evals.to_numpy()
    best_pos = int(np.argmin(values[:-k]))
    best = float(values[best_pos])
    if best <= 0 or not np.all(values[-k:] > best * (1 + thresholds.overfit_rise)):
        return []
    train = real_loss(metrics)
    best_step, last_step = int(evals.index[best_pos]), int(evals.index[-1])
    at_best = train[train.index <= best_step].iloc[-3:]
    later = train[train.index > best_step]
    train_fell = not at_best.empty and not later.empty and float(later.median()) <= float(at_best.median())
    end = float(np.median(values[-k:]))
    trend = ("while the training loss keeps falling: overfitting" if train_fell else
             "and the training loss did not improve either: the later updates made the model worse")
    message = (f"eval_loss is lowest at step {best_step} ({format_number(best)}) and rises to about "
               f"{format_number(end)} by step {last_step} ({format_number(end / best)}x) {trend}. The checkpoint "
               f"near step {best_step} generalises best; fewer epochs, a lower learning rate, more data or "
               "regularisation would help.")
    return [Finding("overfitting", "warning", best_step, message, end_step=last_step, metric=EVAL_LOSS,
                    evidence={"best_eval_loss": best, "best_step": best_step, "end_eval_loss": end})]
