"""An accuracy the run logs that never leaves zero.

A run that logs an accuracy beside its loss (a task accuracy printed each epoch, an evaluation's exact-match or
format accuracy) tells by it what its owner counts as success. Zero at every one of many logged points means not one
example right by that measure, however far the loss fell: the loss may have learned the token statistics (the
frequent tokens, a fixed template) and not the task. A warning, not a break: the data cannot tell a task the run has
not reached yet from an accuracy computed wrongly (predictions compared with labels off by one position, a format
check that never matches), and both want a look. Left alone: a reward named for accuracy (GRPO's accuracy reward,
DPO's rewards/accuracies: the reward and pair detectors read those), and an accuracy at zero beside another of the same
split that moved (an exact-sequence accuracy next to a token accuracy that rose: long targets are rarely matched whole);
a training accuracy that rose does not excuse a held-out one at zero.
"""
from __future__ import annotations

import re

import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from ..metric_names import is_held_out
from .metrics import Metrics, finite, format_number, real_loss

_ACCURACY_NAME = re.compile(r"(^|[^a-z])acc(uracy|uracies)?([^a-z]|$)", re.IGNORECASE)
_ZERO = 0.01  # never above this: under one example in a hundred right (a fraction), or 0.01% (a percentage)
_MIN_POINTS = 5  # logged points at zero before the accuracy says something rather than "not yet"


def detect_accuracy_at_zero(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `accuracy_at_zero` warning per accuracy that stayed at zero over the whole log, or []."""
    accuracies = {name: finite(series) for name, series in metrics.items() if is_an_accuracy(name)}
    # another measure of the same outputs (the same split) that moved: the one at zero is the stricter, not a dead
    # task; a training accuracy that rose says nothing of held-out data scored at zero
    moved = {_split(name) for name, series in accuracies.items() if _moved(series)}
    return [_finding(name, series, metrics) for name, series in accuracies.items()
            if len(series) >= _MIN_POINTS and _split(name) not in moved]


def is_an_accuracy(name: str) -> bool:
    """Whether a metric is an accuracy (eval_accuracy, val/acc, mean_token_accuracy), not a reward named for one."""
    return _ACCURACY_NAME.search(name) is not None and "reward" not in name.lower()


def _split(name: str) -> str:
    """"held-out" for an evaluation's metric (eval_accuracy, val/acc, test_acc), else "train"."""
    return "held-out" if is_held_out(name) else "train"


def _moved(series: pd.Series) -> bool:
    return len(series) > 0 and float(series.abs().max()) > _ZERO


def _finding(name: str, accuracy: pd.Series, metrics: Metrics) -> Finding:
    first, last = int(accuracy.index[0]), int(accuracy.index[-1])
    top = float(accuracy.abs().max())
    message = (f"{name} was never above {format_number(top)} at any of its {len(accuracy)} logged points (steps "
               f"{first} to {last}){_loss_beside(metrics)}: {'no' if top == 0 else 'next to no'} example right by the "
               "run's own measure. Either the model learned the token statistics and not the task, or the accuracy "
               "is computed wrongly (predictions compared with labels shifted by one position, a format check "
               "that never matches); score a few generated outputs by hand to tell which.")
    return Finding("accuracy_at_zero", "warning", first, message, end_step=last, metric=name,
                   evidence={"points": len(accuracy), "max": top})


def _loss_beside(metrics: Metrics) -> str:
    loss = real_loss(metrics)
    if len(loss) < 2:
        return ""
    return (f", while the loss went {format_number(float(loss.iloc[0]))} -> {format_number(float(loss.iloc[-1]))} "
            f"over steps {int(loss.index[0])} to {int(loss.index[-1])}")
