"""No "healthy" without evidence: did the loss of an SFT or pre-training log actually fall?

VERDICTS.md: healthy is not "no finding fired"; the data must show a run that learned. For an
LM loss that evidence is the loss (or the eval loss) ending clearly below where it started: the
median of the last tenth of the logged points below the median of the first tenth by at least
`learning_min_fall`. When it did not, or when only a couple of points were logged, the run gets
a `no_learning_evidence` warning that says what was seen. Preference and RL logs are judged by
`never_learned` (their loss is not an LM loss), except that a couple of points are too few for them too.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, finite, format_number, is_preference_log, real_loss

EVAL_LOSS = "eval_loss"


def detect_no_learning_evidence(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_evidence` warning when the log does not show the loss falling, or []."""
    if LOSS not in metrics:
        return []
    loss = real_loss(metrics)
    if is_preference_log(metrics) and len(loss) >= thresholds.learning_min_points:
        return []  # judged by never_learned: their loss is not an LM loss that must fall
    if len(loss) < thresholds.learning_min_points:
        if len(loss) == 0:
            return []
        message = (f"only {len(loss)} finite loss {'point was' if len(loss) == 1 else 'points were'} logged: "
                   "too few to tell whether the run learned (log more often, e.g. logging_steps=10).")
        return [Finding("no_learning_evidence", "warning", int(loss.index[-1]), message, metric=LOSS,
                        evidence={"n_points": int(len(loss))})]
    fell, head, tail = _fell(loss, thresholds)
    if fell:
        return []
    eval_loss = finite(metrics.get(EVAL_LOSS, loss.iloc[:0]))
    if len(eval_loss) >= 2 and _fell(eval_loss, thresholds)[0]:
        return []
    message = (f"the loss did not fall: about {format_number(head)} over the first logged points and {format_number(tail)} over the "
               f"last ({len(loss)} points, steps {int(loss.index[0])} to {int(loss.index[-1])}), and no eval loss "
               "fell either: no evidence the run learned. Check the learning rate, that the loss covers the "
               "answer tokens, and whether training started from an already trained model.")
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric=LOSS, evidence={"head": head, "tail": tail, "n_points": int(len(loss))})]


def _fell(series, thresholds: Thresholds) -> tuple[bool, float, float]:
    """Whether the last tenth ends below where the log started (its first tenth, or its very first point)."""
    values = series.to_numpy(dtype="float64")
    k = max(1, len(values) // 10)
    head = max(float(np.median(values[:k])), float(values[0]))  # a loss learned within the first tenth fell too
    tail = float(np.median(values[-k:]))
    return tail < head - thresholds.learning_min_fall * abs(head), head, tail
