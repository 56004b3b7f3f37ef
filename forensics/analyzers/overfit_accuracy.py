"""A held-out loss a little above its best while the held-out accuracy beside it kept improving: no overfitting.

An accuracy is the share of held-out targets the model ranks first, read off the same predicted distributions whose
cross-entropy is the eval loss. Where it reaches a new best after the eval loss's best and ends above its level there,
the later checkpoints predict the held-out data better; a cross-entropy up a little beside it is the model growing
more confident (a label-smoothed one most of all: its targets never reach 1), what Guo et al. (2017, On Calibration of
Modern Neural Networks) call overfitting to the NLL without overfitting in error. The `overfitting` warning's advice,
keep the checkpoint at the eval loss's best, would keep a worse model by the task's own measure (avinash7055's
OpenNMT-py transliteration, label smoothing 0.1: xent lowest 1.1195 at step 13,000, at most 1.7% above it after,
while validation accuracy went 92.01 -> 92.44 -> 92.38 at the last). Only a rise under `CLIMB` at every eval after
the best: a larger one is the owner's to look at whatever the accuracy did (Kabeermd's LSTM LM, +4.5% beside an
accuracy at its best). A generation score (BLEU, ROUGE) is measured on decoded text, not on these distributions, and
does not excuse a rise (Wenxin-Jiang's bert2bert: +1.1% beside ROUGE at its best, judged overfitting).

The accuracy must be scored with the eval loss: on its held-out set (of a named eval set, that set's: `eval_g0_loss`
-> `eval_g0_accuracy`; of `eval_loss`, the validation split's, which val_loss / validation_loss / eval_loss all read
as, never a test split's `test_accuracy`) and at its evaluations (logged at the eval loss's best step and its last).
Another set's accuracy improving says nothing of the checkpoints the eval loss measured.
"""
from __future__ import annotations

import pandas as pd

from ..findings import Finding
from ..metric_names import is_held_out, is_test_split
from .accuracy_at_zero import is_an_accuracy
from .eval_levels import CLIMB
from .metrics import Metrics, finite


def accuracy_kept_improving(metrics: Metrics, found: Finding) -> bool:
    """Whether the eval loss `found` tells of stayed under `CLIMB` above its best at every eval after it while a
    held-out accuracy of the same eval set reached a new best after that best and ends above its level there."""
    evals = finite(metrics.get(found.metric or "", pd.Series(dtype="float64")))
    best_step = int(found.evidence.get("best_step", -1))
    if best_step not in evals.index:
        return False
    best, after = float(evals.loc[best_step]), evals[evals.index > best_step]
    if best <= 0 or after.empty or float(after.max()) > best * (1 + CLIMB):
        return False
    last_step = int(evals.index[-1])
    return any(_improved_since(accuracy, best_step, last_step)
               for accuracy in _held_out_accuracies(metrics, found.metric or "")
               if {best_step, last_step} <= set(accuracy.index))


def _held_out_accuracies(metrics: Metrics, loss_name: str) -> list[pd.Series]:
    """The held-out accuracies of the eval loss `loss_name`'s own set (module docstring): of its named eval set where
    it is one (`eval_g0_loss` -> `eval_g0_accuracy`), no test split's beside a validation split's loss."""
    eval_set = loss_name[:-len("loss")] if loss_name.endswith("_loss") and loss_name != "eval_loss" else ""
    return [finite(metrics[name]) for name in metrics
            if is_held_out(name) and is_an_accuracy(name) and name.startswith(eval_set)
            and is_test_split(name) == is_test_split(loss_name)]


def _improved_since(accuracy: pd.Series, best_step: int, last_step: int) -> bool:
    """A new best after `best_step`, and a last value, logged at `last_step` or later, above the one at `best_step`."""
    upto, after = accuracy[accuracy.index <= best_step], accuracy[accuracy.index > best_step]
    if upto.empty or after.empty or int(accuracy.index[-1]) < last_step:
        return False
    return float(after.max()) > float(upto.max()) and float(accuracy.iloc[-1]) > float(upto.iloc[-1])
