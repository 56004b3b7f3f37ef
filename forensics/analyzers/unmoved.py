"""Never learned, at any level: a loss that did not move over the run's first epoch, logged from its start.

A pass over every batch of the data changes a model that is learning; one that changes nothing got updates that
reach nothing it predicts with (an adapter not in the forward pass, parameters the optimizer does not hold). Every
logged window within `_UNMOVED` of the loss's level, with no trend, while grad_norm and the learning rate were not 0:
per-window noise of a real fine-tune is several times wider than this. Half an epoch will do, and no grad_norm need be
logged, where the eval loss did not move either at three evaluations or more over the later half of the log (within
`_EVAL_STILL`, and not lower at every one); a loss that fell over its first points and then held has learned.
"""
from __future__ import annotations

import numpy as np

from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, Metrics, finite, format_number, format_rate

def never_learned_finding(loss, message: str, evidence: dict) -> Finding:
    """The `never_learned` error over the whole log, as every rule of this module, `never_learned` and
    `stuck_at_guess` gives it."""
    return Finding("never_learned", "error", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                   metric=LOSS, evidence={**evidence, "n_points": int(len(loss))})


_UNMOVED = 0.01  # the middle 80% of the logged losses within this share of their median ...
_NO_TREND = 0.005  # ... and the last quarter's median within this share of the first quarter's
UNMOVED_POINTS = 20
FROM_THE_START = 0.1  # epochs: the log's first point within the first tenth of the first epoch


def unmoved_for_an_epoch(metrics: Metrics, loss, values) -> list[Finding]:
    """The loss did not move over the run's whole first epoch, logged from its start, while gradients flowed and
    the learning rate was not 0: the updates changed nothing the model predicts. Half an epoch is enough, and a
    grad_norm that was not logged no bar, where the eval loss did not move either (`_eval_unmoved`): then the
    held-out loss says the same as the training loss, at every evaluation over half the run."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is None or len(values) < UNMOVED_POINTS or epochs.min() > FROM_THE_START:
        return []
    held = _eval_unmoved(metrics, loss)
    if epochs.max() < (_HALF_EPOCH if held else 0.95):
        return []
    level = float(np.median(values))
    lo, hi = np.percentile(values, [10, 90])
    k = len(values) // 4
    drift = abs(float(np.median(values[-k:])) - float(np.median(values[:k])))
    start = float(np.median(values[:_START_POINTS]))  # a fall over the first few points then flat is learning
    if level <= 0 or hi - lo > _UNMOVED * level or drift > _NO_TREND * level or abs(start - level) > _UNMOVED * level:
        return []
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else None
    lr = finite(metrics["learning_rate"]) if "learning_rate" in metrics else None
    if lr is not None and float(lr.max()) <= 0:
        return []  # no step size: other findings say so
    if grad is not None and len(grad):
        if float(grad.median()) <= 0:
            return []  # no gradient: other findings say so
        moved_by, unseen = f" while grad_norm was about {format_number(float(grad.median()))}", ""
    elif held and lr is not None:
        moved_by, unseen = "", " (grad_norm was not logged, so whether gradients reached them is not seen)"
    else:
        return []
    accuracy = finite(metrics["mean_token_accuracy"]) if "mean_token_accuracy" in metrics else None
    also = (f", and mean_token_accuracy stayed at {format_number(float(accuracy.iloc[0]))} -> "
            f"{format_number(float(accuracy.iloc[-1]))}" if accuracy is not None and len(accuracy) >= 2 else "")
    also += "" if held is None else f", and {held}"
    span = ("its whole first epoch (epoch " if epochs.max() >= 0.95 else "the first part of its first epoch (to epoch ")
    message = (f"the model never learned: over {span}{format_number(float(epochs.max()))}, "
               f"{len(values)} logged points from step {int(loss.index[0])}) the loss stayed at about "
               f"{format_number(level)} (the middle 80% within {100 * (hi - lo) / level:.2g}% of it, "
               f"{format_number(float(values[0]))} -> {format_number(float(values[-1]))})" + moved_by +
               (f"{' and' if moved_by else ' while'} the learning rate was up to {format_rate(float(lr.max()))}"
                if lr is not None else "") + also +
               ": the updates changed nothing the model predicts. Check that the trainable parameters are in the "
               "forward pass (an adapter attached to the model that is trained), that the optimizer holds them, and "
               f"that they require gradients{unseen}.")
    evidence = {"level": level, "reason": "unmoved over the first epoch", "spread": float((hi - lo) / level),
                "grad_norm": float(grad.median()) if grad is not None and len(grad) else None,
                "eval_unmoved": held is not None}
    return [never_learned_finding(loss, message, evidence)]


_HALF_EPOCH = 0.5
_START_POINTS = 3  # the loss's start is read over this many first points
_EVAL_STILL = 0.005  # an eval loss within this share of its median at every evaluation: it did not move
_FEWEST_EVALS = 3


def _eval_unmoved(metrics: Metrics, loss) -> str | None:
    """The eval loss at every one of `_FEWEST_EVALS` or more evaluations within `_EVAL_STILL` of its median, the
    evaluations spread over the later half of the training log at least, said as a clause; else None. A model that
    learns anything moves its held-out loss by more than this over half an epoch."""
    evals = finite(metrics["eval_loss"]) if "eval_loss" in metrics else None
    if evals is None or len(evals) < _FEWEST_EVALS:
        return None
    first, last = int(loss.index[0]), int(loss.index[-1])
    if int(evals.index[-1]) - int(evals.index[0]) < (last - first) / 2:
        return None
    level = float(evals.median())
    if level <= 0 or float(evals.max() - evals.min()) > _EVAL_STILL * level:
        return None
    if bool(np.all(np.diff(evals.to_numpy()) < 0)):
        return None  # lower at every evaluation: a slow learner, not one that changed nothing
    return (f"the eval loss stayed at {format_number(float(evals.iloc[0]))} -> {format_number(float(evals.iloc[-1]))} "
            f"(within {100 * float(evals.max() - evals.min()) / level:.2g}% at all {len(evals)} evaluations)")
