"""A held-out loss measured once or twice, after several epochs, worse than the training loss of the first epoch.

In the first pass over the data every training batch is scored before the model has trained on it, so the training
loss there is a held-out loss too. A run evaluated only at its end (eval_steps past the run's last step, a closing
`trainer.evaluate()`) has too few evaluations for `overfitting` to see a rise; but where that one eval loss, taken
after two or more passes, sits clearly above what the model scored on unseen batches late in its first pass, while the
training loss has since fallen far under it, held-out text got worse as the training examples got easier: the model
was fitting its training set, not the task (wawacaiii's LLaMA-Factory QLoRA of gemma-2b: train 1.24 -> 0.55 by epoch
in steps at each epoch boundary, the one eval 1.51 at the end). Where the eval set is unlike the training set the
comparison says less, which the message says.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, epoch_at, finite, format_number, is_preference_log, real_loss
from .overfitting import EVAL_LOSS

_MAX_EVALS = 2  # from three evaluations on `overfitting` judges the series itself
_PASSES = 2.0  # the eval comes after at least this many passes over the data
_FIRST_PASS_POINTS = 3  # training points logged within the first pass, at least
_ABOVE_FIRST_PASS = 1.1  # the eval loss this many times the late first-pass training loss ...
_ABOVE_TRAIN_NOW = 1.5  # ... and this many times the training loss logged at the eval


def detect_eval_above_first_pass(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `overfitting` warning at the last evaluation of a multi-epoch run evaluated once or twice, where that eval
    loss is above the late first-pass training loss and far above the training loss at the eval (and not under an
    earlier eval: held-out text that got better is no overfitting), or []."""
    evals = finite(metrics.get(EVAL_LOSS, pd.Series(dtype="float64")))
    epochs = finite(metrics.get("epoch", pd.Series(dtype="float64")))
    if not 1 <= len(evals) <= _MAX_EVALS or not _fractional(epochs) or LOSS not in metrics \
            or is_preference_log(metrics):
        return []
    train = real_loss(metrics)
    step, held_out = int(evals.index[-1]), float(evals.iloc[-1])
    epoch = epoch_at(epochs, step)
    first_pass = _late_first_pass(train, epochs)
    now = train[train.index <= step]
    if epoch is None or epoch < _PASSES or first_pass is None or now.empty or held_out <= 0 \
            or float(evals.iloc[0]) > held_out:  # (an earlier eval above it: held-out text got better since)
        return []
    train_now = float(now.iloc[-1])
    if train_now <= 0 or held_out < _ABOVE_FIRST_PASS * first_pass or held_out < _ABOVE_TRAIN_NOW * train_now:
        return []
    message = (f"the eval loss, measured {'once' if len(evals) == 1 else 'twice'}, is {format_number(held_out)} at "
               f"step {step} (epoch {format_number(epoch)}): above the training loss late in the first pass over the "
               f"data (about {format_number(first_pass)}, each batch scored before the model had trained on it, so a "
               f"held-out measure too) and {format_number(held_out / train_now)}x the training loss now "
               f"({format_number(train_now)}). The model fits its training examples far better than in the first epoch "
               "and held-out text worse than then: overfitting, if the eval set is drawn like the training set. "
               "An evaluation each epoch (eval_strategy='epoch') would show where it began; fewer epochs, a lower "
               "learning rate or more data would help.")
    return [Finding("overfitting", "warning", step, message, metric=EVAL_LOSS,
                    evidence={"eval_loss": held_out, "first_pass_loss": first_pass, "train_loss_at_eval": train_now,
                              "epoch": epoch, "evaluations": int(len(evals))})]


def _fractional(epochs: pd.Series) -> bool:
    """An epoch counter that counts fractions of a pass (the HF Trainer's): a loop's whole-number labels may count
    from 0 or from 1, so they cannot say which points fell in the first pass."""
    values = epochs.to_numpy(dtype="float64")
    return len(values) > 0 and bool(np.any(values != np.round(values)))


def _late_first_pass(train: pd.Series, epochs: pd.Series) -> float | None:
    """The median training loss over the last half of the points logged within the first epoch (the model at its
    best on batches it had not yet seen), or None where fewer than `_FIRST_PASS_POINTS` were logged there."""
    at = pd.Series([epoch_at(epochs, int(s)) for s in train.index], index=train.index, dtype="float64")
    first = train[(at <= 1.0).to_numpy()]
    if len(first) < _FIRST_PASS_POINTS:
        return None
    return float(np.median(first.iloc[len(first) // 2:].to_numpy()))
