"""A loss that falls several-fold while the token accuracy logged beside it stays put.

TRL's SFTTrainer and ms-swift log the share of next tokens the model ranks first (`mean_token_accuracy`,
`token_acc`) on the same batches as the loss. When a model really fits its targets, the cross-entropy
falling to half or less moves that share up with it. A loss `_FALL` times lower at the end with the
accuracy up by less than `_RISE` says the two measure different things: the loss is scaled or computed
in a way the accuracy is not (a fused or chunked kernel with packing, a sum over a changing number of
tokens), and its fall cannot be read as learning. A warning: the run may be fine, its loss curve is not
evidence of it. A preference or RL log is left alone: its loss (DPO's pairwise -log sigmoid, GRPO's policy
gradient) is not the cross-entropy TRL's `mean_token_accuracy` goes with, so the two need not move together. Near the
ceiling the accuracy has little room to rise: there the share of tokens still ranked wrong must fall, by `_ERRORS_FALL`
or more, for the two to agree (a loss 0.21 -> 0.08 beside an accuracy 0.950 -> 0.966 is a third fewer wrong tokens: they
agree).

The two also bound each other at every step: a target token the model does not rank first has a probability of
at most one half, so a cross-entropy over the same tokens is at least (1 - accuracy) x ln 2. A loss under half of
that bound at most of the logged steps (from the one dated on) cannot be over the tokens the accuracy counts: a
loss averaged over a varying, partly empty token count, or computed apart from the accuracy (sogmgm's TRL run:
loss 0.06-0.1 beside a token accuracy of 0.37-0.54).
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .fine_tune_start import token_accuracy
from .metrics import LN2, Metrics, format_number, head_and_tail, is_preference_log, real_loss

_FALL = 2.0  # the last quarter's loss at most half the first quarter's ...
_RISE = 0.05  # ... while the token accuracy rose by less than this
_ERRORS_FALL = 0.2  # ... and the share of tokens ranked wrong fell by less than this fraction of itself
_UNDER_BOUND = 0.5  # a loss under this x (1 - accuracy) x ln 2 is not over the tokens the accuracy counts ...
_BOUND_SHARE = 0.75  # ... at this share of the logged steps from the first such step on
_BOUNDED_KEYS = ("mean_token_accuracy", "token_acc")  # accuracies over the loss's own target tokens
_MIN_POINTS = 8


def detect_loss_accuracy_mismatch(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `loss_accuracy_mismatch` warning over the log, or []."""
    if is_preference_log(metrics):
        return []  # a pairwise or RL loss: not the token cross-entropy the accuracy bounds
    name, accuracy = token_accuracy(metrics)
    loss = real_loss(metrics)
    if accuracy is None or min(len(loss), len(accuracy)) < max(_MIN_POINTS, thresholds.learning_min_points):
        return []
    loss_head, loss_tail = head_and_tail(loss)
    acc_head, acc_tail = head_and_tail(accuracy)
    fewer_errors = acc_head < 1 and (1 - acc_tail) <= (1 - _ERRORS_FALL) * (1 - acc_head)
    if not (loss_tail > 0 and loss_head >= _FALL * loss_tail and acc_tail - acc_head < _RISE and not fewer_errors):
        return _under_accuracy_bound(loss, name, accuracy)
    message = (f"the loss fell {format_number(loss_head / loss_tail)}-fold (about {format_number(loss_head)} over the "
               f"first quarter of the log to {format_number(loss_tail)} over the last) while {name} on the same "
               f"batches stayed at about {format_number(acc_head)} -> {format_number(acc_tail)}: a model fitting its "
               "targets ranks more of them first as its cross-entropy halves, so the logged loss is scaled or "
               "computed unlike the accuracy (a fused kernel with packing, a sum over a changing token count) and "
               "its fall is no evidence of learning. Check the loss on a fixed batch against the accuracy.")
    return [Finding("loss_accuracy_mismatch", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric="loss", evidence={"loss_fall": loss_head / loss_tail, "accuracy_rise": acc_tail - acc_head,
                                             "accuracy_metric": name})]



def _under_accuracy_bound(loss, name: str, accuracy) -> list[Finding]:
    """The warning where the loss sits under half the floor its own token accuracy sets, `(1 - accuracy) x ln 2`,
    at `_BOUND_SHARE` of the steps from the first such step to the end (at least three of them), or []."""
    if name not in _BOUNDED_KEYS:
        return []
    both = loss.to_frame("loss").join(accuracy.rename("accuracy"), how="inner")
    floor = (1 - both["accuracy"]) * LN2
    under = (both["loss"] < _UNDER_BOUND * floor).to_numpy()
    # the first step from which the loss stays under the bound at most of the logged steps
    start = next((i for i in range(len(under)) if under[i] and under[i:].mean() >= _BOUND_SHARE), None)
    if start is None or under[start:].sum() < 3:
        return []
    at = both.iloc[start:]
    step = int(both.index[start])
    message = (f"from step {step} the loss (median {format_number(float(at['loss'].median()))}) is under half of what "
               f"its own {name} allows (median {format_number(float(at['accuracy'].median()))}: a target token not "
               f"ranked first has a probability of at most 1/2, so the cross-entropy over the same tokens is at least "
               f"(1 - accuracy) x ln 2 = {format_number(float(floor.iloc[start:].median()))}), at "
               f"{int(under[start:].sum())} of {len(at)} logged steps: the loss is not over the tokens the accuracy "
               "counts (averaged over a varying or partly empty token count: labels masked or cut away by truncation, "
               "or computed apart from the accuracy), and its level is no evidence of learning. Check a few batches' "
               "labels after truncation.")
    return [Finding("loss_accuracy_mismatch", "warning", step, message, end_step=int(both.index[-1]), metric="loss",
                    evidence={"under_accuracy_bound": True, "accuracy_metric": name,
                              "points_under": int(under[start:].sum()), "points": int(len(at))})]
