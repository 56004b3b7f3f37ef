"""A classifier or multiple-choice model that never learned: its loss at ln k, the uniform guess over its k answers.

`at_chance` (from `never_learned.detect_never_learned`) reads k from the loss level and needs the evaluation to say
the same (an accuracy at 1/k, or an eval loss at ln 2 for two answers); `detect_classifier_at_chance` takes k from
the config's num_labels where no eval accuracy is logged. Both give one `never_learned` error (VERDICTS.md).
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import EVAL_ACCURACY_KEYS, LN2, LOSS, Metrics, a_or_an, finite, format_number, real_loss
from .unmoved import never_learned_finding


def at_chance(metrics: Metrics, loss, values) -> list[Finding]:
    """A classifier or multiple-choice model at the uniform guess over k answers: the training loss at ln k
    (k = 2 to 20) at nearly every logged step, and its evaluation says the same (accuracy at 1/k, or the eval
    loss at ln k)."""
    level = float(np.median(values))
    if not 0.5 <= level <= math.log(_MAX_CHOICES + 1):  # also keeps exp() in range
        return []
    k = round(math.exp(level))
    if not 2 <= k <= _MAX_CHOICES:
        return []
    chance = math.log(k)
    near = np.abs(values - chance) <= _CHANCE_TOLERANCE * chance
    why = _evaluated_at_chance(metrics, k, chance) if near.mean() >= 0.9 else None
    if why is None:
        return []
    message = (f"the model never learned: the loss stays at ln {k} = {format_number(chance)} (a uniform guess over "
               f"{k} answers) at {int(near.sum())} of {len(values)} logged steps, and {why}. Check that the labels "
               "reach the loss (the label column, the answer format), that the classification head is trained, "
               "and the learning rate.")
    return [never_learned_finding(loss, message, {"level": chance, "choices": k, "reason": why,
                                     "share_at_level": float(near.mean())})]


def detect_classifier_at_chance(metrics: Metrics, thresholds: Thresholds, num_labels) -> list[Finding]:
    """One `never_learned` error for a classifier whose config gives its k labels (num_labels, a k-way head): the
    training loss at ln k at 90% of `never_learned_points` or more logged steps and every one of two or more eval
    losses within `_CHANCE_TOLERANCE` of it, or []. The head's label count says what the uniform guess is, where
    no eval accuracy is logged (ananyakaligal's 4-way multiple-choice DeBERTa LoRA: 1.421 -> 1.356 over 137 points,
    eval 1.3716, 1.3609, 1.3628 against ln 4 = 1.386)."""
    loss = real_loss(metrics) if LOSS in metrics else None
    evals = finite(metrics["eval_loss"]) if "eval_loss" in metrics else None
    if any(key in metrics for key in EVAL_ACCURACY_KEYS):
        return []  # an eval accuracy says whether it is at chance: `at_chance` reads it
    if not isinstance(num_labels, int) or isinstance(num_labels, bool) or not 2 <= num_labels <= _MAX_CHOICES \
            or loss is None or len(loss) < thresholds.never_learned_points or evals is None or len(evals) < 2:
        return []
    chance, values = math.log(num_labels), loss.to_numpy()
    near = np.abs(values - chance) <= _CHANCE_TOLERANCE * chance
    if near.mean() < 0.9 or not np.all(np.abs(evals.to_numpy() - chance) <= _CHANCE_TOLERANCE * chance):
        return []
    message = (f"the model never learned: {a_or_an(str(num_labels))}-way classifier (num_labels {num_labels}) whose "
               f"loss stays at ln {num_labels} = {format_number(chance)}, a uniform guess over its labels, at "
               f"{int(near.sum())} of {len(values)} logged steps, and the eval loss stays there too "
               f"({format_number(float(evals.iloc[0]))} -> {format_number(float(evals.iloc[-1]))}). Check that the "
               "labels reach the loss, that the classification head is trained (modules_to_save for an adapter), and "
               "the learning rate.")
    return [never_learned_finding(loss, message, {"level": chance, "choices": num_labels,
                                                  "reason": "classifier at ln k",
                                                  "share_at_level": float(near.mean())})]


_MAX_CHOICES = 20
_CHANCE_TOLERANCE = 0.03  # a loss within 3% of ln k sits at the uniform guess


def _evaluated_at_chance(metrics: Metrics, k: int, chance: float) -> str | None:
    """Why the evaluation shows a classifier at chance (the later half's eval accuracy within reach of 1/k), or
    None. An accuracy is what says the model is a classifier at all: a language model's loss of 2.48 also sits
    near ln 12, and an eval loss beside it says nothing about answers."""
    accuracy = next((finite(metrics[key]) for key in EVAL_ACCURACY_KEYS if key in metrics), None)
    evals = finite(metrics["eval_loss"]) if "eval_loss" in metrics else None
    # two evaluations are enough where the eval loss sits at ln k beside them (surely-zoe: 0.330, 0.3315 for 3 labels)
    at_level = (evals is not None and len(evals) >= 2
                and bool(np.all(np.abs(evals - chance) <= _CHANCE_TOLERANCE * chance)))
    if accuracy is not None and (len(accuracy) >= 3 or len(accuracy) >= 2 and at_level):
        later = float(accuracy.iloc[len(accuracy) // 2:].median())
        if abs(later - 1 / k) <= max(0.05, 0.25 / k):
            return f"the eval accuracy stays at about {format_number(later)}, chance for {k} answers"
    if k == 2 and evals is not None and len(evals) >= 2 and _held_out_at_ln2(evals):
        return (f"the eval loss stays there too ({format_number(float(evals.iloc[0]))} -> "
                f"{format_number(float(evals.iloc[-1]))}, not falling)")
    return None


def _held_out_at_ln2(evals) -> bool:
    """The eval loss sits at ln 2 (its median within `_CHANCE_TOLERANCE`) and did not fall. Only ln 2 is read
    without an accuracy: a language model's loss near ln 12 is common, but a training AND held-out loss both flat on
    0.693 is a two-way guess (CPM-2's fine-tune: 0.699 -> 0.695 train, 0.702 -> 0.714 eval over 100 iterations)."""
    level = float(np.median(evals.to_numpy()))
    return abs(level - LN2) <= _CHANCE_TOLERANCE * LN2 and float(evals.iloc[-1]) >= float(evals.iloc[0]) - 0.005
