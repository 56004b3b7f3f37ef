"""A loss that falls several-fold while the token accuracy logged beside it stays put.

TRL's SFTTrainer and ms-swift log the share of next tokens the model ranks first (`mean_token_accuracy`,
`token_acc`) on the same batches as the loss. When a model really fits its targets, the cross-entropy
falling to half or less moves that share up with it. A loss `_FALL` times lower at the end with the
accuracy up by less than `_RISE` says the two measure different things: the loss is scaled or computed
in a way the accuracy is not (a fused or chunked kernel with packing, a sum over a changing number of
tokens), and its fall cannot be read as learning. A warning: the run may be fine, its loss curve is not
evidence of it.
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .fine_tune_start import token_accuracy
from .metrics import Metrics, format_number, head_and_tail, real_loss

_FALL = 2.0  # the last quarter's loss at most half the first quarter's ...
_RISE = 0.05  # ... while the token accuracy rose by less than this
_MIN_POINTS = 8


def detect_loss_accuracy_mismatch(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `loss_accuracy_mismatch` warning over the log, or []."""
    name, accuracy = token_accuracy(metrics)
    loss = real_loss(metrics)
    if accuracy is None or min(len(loss), len(accuracy)) < max(_MIN_POINTS, thresholds.learning_min_points):
        return []
    loss_head, loss_tail = head_and_tail(loss)
    acc_head, acc_tail = head_and_tail(accuracy)
    if not (loss_tail > 0 and loss_head >= _FALL * loss_tail and acc_tail - acc_head < _RISE):
        return []
    message = (f"the loss fell {format_number(loss_head / loss_tail)}-fold (about {format_number(loss_head)} over the "
               f"first quarter of the log to {format_number(loss_tail)} over the last) while {name} on the same "
               f"batches stayed at about {format_number(acc_head)} -> {format_number(acc_tail)}: a model fitting its "
               "targets ranks more of them first as its cross-entropy halves, so the logged loss is scaled or "
               "computed unlike the accuracy (a fused kernel with packing, a sum over a changing token count) and "
               "its fall is no evidence of learning. Check the loss on a fixed batch against the accuracy.")
    return [Finding("loss_accuracy_mismatch", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric="loss", evidence={"loss_fall": loss_head / loss_tail, "accuracy_rise": acc_tail - acc_head,
                                             "accuracy_metric": name})]

