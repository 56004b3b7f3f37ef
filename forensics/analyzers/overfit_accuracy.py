"""A held-out loss a little above its best while the held-out accuracy beside it kept improving: no overfitting.

An accuracy is the share of held-out targets the model ranks first, read off the same predicted distributions whose
cross-entropy is the eval loss. Where it reaches a new best after the eval loss's best and ends above its level there,
the later checkpoints predict the held-out data better; a cross-entropy up a little beside it is the model growing
more confident (a label-smoothed one most of all: its targets never reach 1), what Guo et al. (2017, On Calibration of
Modern Neural Networks) call overfitting to the NLL without overfitting in error. The `overfitting` warning's advice,
keep the checkpoint at the eval loss's best, would keep a worse model by the task's own measure (avinash7055's
OpenNMT-py transliteration, label smoothing 0.1: xent lowest 1.1195 at step 13,000, at most 1.7% above it after,
while validation accuracy went 92.01 -> 92.44 -> 92.38 at the last). A rise under `CLIMB` at every eval after the
best needs the accuracy's new best and a last value above its level at the best. A larger one is the owner's to look
at unless it is small by the run's own measure - the eval loss gave back under `_GAVE_BACK` of what it fell from its
first eval to its best - and the accuracy set a new best at EVERY eval after the loss's best: no checkpoint the advice
would keep scores better by the task's measure (gkrls_straggle-ml-experiments' BERT on SQuAD: val loss 1.178 -> 1.0296
-> 1.0655, a quarter of its fall given back, while exact match went 78.49 -> 78.99 -> 79.32). A rise past that is
overfitting whatever the accuracy did (ozguozkan_DI725_Assignment_1's GPT-2 classifier: val loss 0.5355 -> 0.4173 ->
0.5507, more than its fall, beside accuracy 0.866 -> 0.902; SwapnilupGrad_HugginFace's and Obychenkov_CSE234-hardneg's
best at the first eval, +47% and +15%, no fall to measure it by), and so is one beside an accuracy that fell back
(Kabeermd's LSTM LM: +4.5%, its accuracy under its best at three of its ten later epochs). An extractive-QA exact
match is an accuracy (the share of held-out questions whose argmax span is right), and only it excuses the larger
rise: a token accuracy (TRL's eval_mean_token_accuracy, the teacher-forced share of next tokens right) keeps creeping
up while an SFT run memorises its data (review 29b: eval loss 1.00 -> 1.14 beside token accuracy 0.70 -> 0.71). QA's
token F1 is partial credit and, like a generation score (BLEU, ROUGE, measured on decoded text), does not excuse a
rise (Wenxin-Jiang's bert2bert: +1.1% beside ROUGE at its best, judged overfitting).

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

_GAVE_BACK = 0.5  # a rise past `CLIMB` under this share of the eval loss's fall to its best: the run kept most of it


def accuracy_kept_improving(metrics: Metrics, found: Finding) -> bool:
    """Whether a held-out accuracy of the same eval set as the eval loss `found` tells of reached a new best after
    the loss's best and ends above its level there, where the loss stayed under `CLIMB` above its best at every eval
    after it; or, where it rose further but gave back under `_GAVE_BACK` of its fall, set a new best at every one of
    those evals (module docstring)."""
    evals = finite(metrics.get(found.metric or "", pd.Series(dtype="float64")))
    best_step = int(found.evidence.get("best_step", -1))
    if best_step not in evals.index:
        return False
    best, after = float(evals.loc[best_step]), evals[evals.index > best_step]
    if best <= 0 or after.empty:
        return False
    last_step = int(evals.index[-1])
    accuracies = {name: accuracy for name, accuracy in _held_out_accuracies(metrics, found.metric or "").items()
                  if {best_step, last_step} <= set(accuracy.index)}
    if float(after.max()) <= best * (1 + CLIMB):
        return any(_improved_since(accuracy, best_step, last_step) for accuracy in accuracies.values())
    first = float(evals.iloc[0])
    if float(after.max()) - best >= _GAVE_BACK * (first - best):  # (no fall at all where the best is the first eval)
        return False
    # only the share of answers right: a token accuracy creeps up while an SFT run memorises (module docstring)
    return any(_new_best_at_each_eval(accuracy, best_step, list(after.index))
               for name, accuracy in accuracies.items() if _is_exact_match(name))


def _held_out_accuracies(metrics: Metrics, loss_name: str) -> dict[str, pd.Series]:
    """The held-out accuracies of the eval loss `loss_name`'s own set (module docstring): of its named eval set where
    it is one (`eval_g0_loss` -> `eval_g0_accuracy`), no test split's beside a validation split's loss."""
    eval_set = loss_name[:-len("loss")] if loss_name.endswith("_loss") and loss_name != "eval_loss" else ""
    return {name: finite(metrics[name]) for name in metrics
            if is_held_out(name) and (is_an_accuracy(name) or _is_exact_match(name)) and name.startswith(eval_set)
            and is_test_split(name) == is_test_split(loss_name)}


def _improved_since(accuracy: pd.Series, best_step: int, last_step: int) -> bool:
    """A new best after `best_step`, and a last value, logged at `last_step` or later, above the one at `best_step`."""
    upto, after = accuracy[accuracy.index <= best_step], accuracy[accuracy.index > best_step]
    if upto.empty or after.empty or int(accuracy.index[-1]) < last_step:
        return False
    return float(after.max()) > float(upto.max()) and float(accuracy.iloc[-1]) > float(upto.iloc[-1])


def _is_exact_match(name: str) -> bool:
    """An extractive-QA evaluation's exact match (eval_exact_match, val_em): the share of answers right, an accuracy."""
    words = name.lower().replace("/", "_").split("_")
    return words[-1] == "em" or name.lower().replace("/", "_").endswith("exact_match")


def _new_best_at_each_eval(accuracy: pd.Series, best_step: int, later_steps) -> bool:
    """Whether the accuracy was scored at each of the eval loss's `later_steps` and set a new best at every one of
    them: better by the task's own measure at every checkpoint the loss rose over."""
    if not set(later_steps) <= set(accuracy.index):
        return False
    so_far = float(accuracy[accuracy.index <= best_step].max())
    for step in later_steps:
        value = float(accuracy[accuracy.index == step].iloc[-1])
        if not value > so_far:
            return False
        so_far = value
    return True
