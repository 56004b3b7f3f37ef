"""A training loss far above the eval loss at every evaluation: the two are not the same quantity.

A model does not score several times better on held-out data than on the batches it trains on; dropout
or an epoch's running average puts the training loss a little above the eval loss, never
`train_eval_ratio` times above it at every one of three or more evaluations (and `train_eval_gap` nats
apart, so two losses near zero are no such pair). Where that is what the log shows, the logged training
loss is computed or scaled differently (summed over gradient-accumulation micro-batches, as the
transformers 4.46-4.47 Trainer logged it; another loss term; another reduction), and the training curve
cannot be read as the model's loss. That is about the log, not the training, so it is a note (info):
its shape still shows whether the run learned, and the eval loss says how well; the cause rules name
the likely reason from the config.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, finite, format_number, real_loss
from .overfitting import EVAL_LOSS

_MIN_PAIRS = 3


def detect_train_eval_mismatch(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `train_eval_mismatch` note at the first evaluation, or []."""
    pairs = train_eval_pairs(metrics)
    if len(pairs) < _MIN_PAIRS:
        return []
    train, evals = pairs["train"].to_numpy(), pairs["eval"].to_numpy()
    if np.any(evals <= 0):  # an eval loss of 0 (or below) makes no ratio
        return []
    ratios = train / evals
    far = (ratios >= thresholds.train_eval_ratio) & (train - evals >= thresholds.train_eval_gap)
    if not far.all():
        return []
    first, last = int(pairs.index[0]), int(pairs.index[-1])
    message = (f"the training loss is {format_number(ratios.min())}x to {format_number(ratios.max())}x the eval loss "
               f"at every one of the {len(pairs)} evaluations ({format_number(train[0])} against "
               f"{format_number(evals[0])} at step {first}): a model does not do that much better on held-out data "
               "than on its training batches, so the logged training loss is not the same quantity (scaled by "
               "gradient accumulation, another loss term or reduction). Read the eval loss to judge the run, and "
               "check how the training loss is computed.")
    return [Finding("train_eval_mismatch", "info", first, message, end_step=last, metric="loss",
                    evidence={"pairs": len(pairs), "median_ratio": float(np.median(ratios)),
                              "min_ratio": float(ratios.min()), "max_ratio": float(ratios.max())})]


def train_eval_pairs(metrics: Metrics) -> pd.DataFrame:
    """Each finite eval loss with the last training loss logged at or before its step, after the eval before
    it (indexed by the eval's step; columns train, eval)."""
    evals, train = finite(metrics.get(EVAL_LOSS, pd.Series(dtype="float64"))), real_loss(metrics)
    rows, previous = {}, None
    for step, value in evals.items():
        window = train[(train.index <= step) & ((train.index > previous) if previous is not None else True)]
        if not window.empty:
            rows[int(step)] = (float(window.iloc[-1]), float(value))
        previous = step
    return pd.DataFrame.from_dict(rows, orient="index", columns=["train", "eval"])
