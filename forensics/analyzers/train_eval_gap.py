"""A training loss far above the eval loss at every evaluation: the two are not the same quantity (and the
other way round from the first epoch on: `detect_eval_above_train`).

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

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, epoch_at, finite, format_number, real_loss
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


_FIRST_EPOCH = 1.05  # an evaluation at or before this epoch (with rounding) comes within the first pass


def detect_eval_above_train(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `train_eval_mismatch` warning where the eval loss is `train_eval_ratio` times the training loss (and
    `train_eval_gap` nats above it) at every one of three or more evaluations, the first of them within the first
    epoch (or at one or two, far above it, `_few_evals_far_above`, each of them within it), and the eval loss not
    rising, or [].

    Within the first pass over the data every training batch is scored before the model has trained on it: the
    training loss there is a held-out loss too, and an eval loss several times it is no overfitting (the eval loss
    does not rise; that is `overfitting`'s to call). The two losses are not computed over the same tokens (labels,
    padding, weighting) or the sets are not alike; the files cannot tell which, so someone should look: a warning."""
    pairs, epochs = train_eval_pairs(metrics), finite(metrics.get("epoch", pd.Series(dtype="float64")))
    if pairs.empty or epochs.empty:
        return []
    first, last = int(pairs.index[0]), int(pairs.index[-1])
    epoch = epochs[epochs.index <= first]
    if epoch.empty or float(epoch.iloc[-1]) > _FIRST_EPOCH:
        return []
    train, evals = pairs["train"].to_numpy(), pairs["eval"].to_numpy()
    if np.any(train <= 0) or evals[-1] > evals[0]:
        return []
    ratios = evals / train
    far = (ratios >= thresholds.train_eval_ratio) & (evals - train >= thresholds.train_eval_gap)
    if len(pairs) >= _MIN_PAIRS and not far.all():
        return []
    if len(pairs) < _MIN_PAIRS and not (_few_evals_far_above(ratios, evals, real_loss(metrics))
                                        and _all_in_the_first_epoch(pairs.index, epochs)):
        return []
    message = (f"{_eval_above_train_at(pairs, float(epoch.iloc[-1]))}: in the first epoch every training batch is "
               f"scored before the model has trained on it, so the two should be alike, {_no_overfitting(len(pairs))}. "
               "The two losses are not computed over the same tokens (labels, padding, loss weighting) or the "
               "evaluation set is not like the training set: check how each is built.")
    return [Finding("train_eval_mismatch", "warning", first, message, end_step=last, metric="eval_loss",
                    evidence={"pairs": len(pairs), "eval_above_train": True, "median_ratio": float(np.median(ratios)),
                              "min_ratio": float(ratios.min()), "max_ratio": float(ratios.max())})]


def _eval_above_train_at(pairs: pd.DataFrame, epoch: float) -> str:
    """How far the eval loss sat above the training loss: at the one evaluation, or from the first to the last."""
    start, last, ratios = pairs.iloc[0], pairs.iloc[-1], pairs["eval"] / pairs["train"]
    at_first = (f"{format_number(start['eval'])} against {format_number(start['train'])} at step "
                f"{int(pairs.index[0])}, epoch {format_number(epoch)}")
    if len(pairs) == 1:
        return f"the eval loss is {format_number(ratios.iloc[0])}x the training loss at the one evaluation ({at_first})"
    return (f"the eval loss is {format_number(ratios.min())}x to {format_number(ratios.max())}x the training loss at "
            f"every one of the {len(pairs)} evaluations, from the first ({at_first}) to the last "
            f"({format_number(last['eval'])} against {format_number(last['train'])})")


def _all_in_the_first_epoch(steps, epochs: pd.Series) -> bool:
    """Whether every evaluation (at `steps`) comes within the first pass (`_FIRST_EPOCH`): the one/two-evaluation rule
    weighs each eval against training batches that were each new when scored, which holds only inside that pass (a
    second evaluation after the second epoch is against batches seen before)."""
    return all((at := epoch_at(epochs, int(step))) is not None and at <= _FIRST_EPOCH for step in steps)


def _no_overfitting(evaluations: int) -> str:
    """Why the gap is no overfitting, in words that fit the count: one evaluation has nothing to rise from."""
    if evaluations == 1:
        return "and the one evaluation comes before any example was seen twice (no overfitting)"
    return "and the eval loss does not rise (no overfitting)"


_FEW_EVALS_RATIO = 10.0  # one or two evaluations: an order of magnitude, not the 3x that three or more need
_AT_THE_START = 0.5  # ... with the eval loss still this share or more of the first training loss logged


def _few_evals_far_above(ratios: np.ndarray, evals: np.ndarray, train: pd.Series) -> bool:
    """Whether one or two evaluations in the first epoch each sit `_FEW_EVALS_RATIO` times the training loss beside them
    and no lower than `_AT_THE_START` of the first training loss: the held-out loss is about where the untrained model
    started while the batches trained on, each new when scored, fell far below it. Too few evaluations to say "every",
    but too far apart for chance, and not two losses near zero (alex-jk's one-epoch sentence-transformers run: the
    training embedding_loss 0.427 -> 0.0022, the one eval_embedding_loss 0.344 at the same step, 156x it)."""
    return (not train.empty and bool(np.all(ratios >= _FEW_EVALS_RATIO))
            and bool(np.all(evals >= _AT_THE_START * float(train.iloc[0]))))


def fold_jump_into_mismatch(findings: list[Finding], metrics: Metrics) -> list[Finding]:
    """A training loss that jumped and never came back (an unrecovered `loss_spike`) to the level at which it sits
    above the eval loss at every evaluation after it (`train_eval_mismatch` from the first evaluation after the jump),
    where the loss before the jump was no higher than the eval loss: the eval loss says the model did not break, so
    the logged training loss changed what it measures at the jump (a resumed run's reduction or accumulation,
    another loss term). One `train_eval_mismatch` warning from the jump in place of both (Pratic2001's resumed
    pre-training: 1.47 at the resume step, 13.85 from the next line on, val_loss 4.0 before and after)."""
    mismatch = next((f for f in findings if f.kind == "train_eval_mismatch"), None)
    jump = next((f for f in findings if f.kind == "loss_spike" and f.severity != "info"
                 and not f.evidence.get("recovered") and mismatch is not None and f.step < mismatch.step), None)
    evals = finite(metrics.get(EVAL_LOSS, pd.Series(dtype="float64")))
    if (jump is None or evals.empty
            or float(jump.evidence.get("baseline", np.inf)) > _JUMP_BEFORE * float(evals.iloc[0])):
        return findings
    if len(evals[evals.index < jump.step]) or int(evals.index[0]) != mismatch.step:
        return findings  # an evaluation before the jump, or the mismatch starting later: not the same story
    message = (f"the training loss jumped from {format_number(jump.evidence['baseline'])} to "
               f"{format_number(jump.evidence['value'])} at step {jump.step} and stays there, while the eval loss "
               f"holds at about {format_number(float(evals.median()))} ({format_number(float(evals.iloc[0]))} -> "
               f"{format_number(float(evals.iloc[-1]))} over {len(evals)} evaluations): the model did not break; the "
               f"logged training loss changed what it measures at step {jump.step}, "
               f"{format_number(mismatch.evidence['min_ratio'])}x to {format_number(mismatch.evidence['max_ratio'])}x "
               "the eval loss at every evaluation after it. Check what changed there (a resume's accumulation or loss "
               "reduction, another loss term, other data) and judge the run by the eval loss.")
    folded = replace(mismatch, severity="warning", step=jump.step, message=message,
                     evidence={**mismatch.evidence, "jump_step": jump.step, "jump_factor": jump.evidence.get("factor")})
    return [folded if f is mismatch else f for f in findings if f is not jump]


_JUMP_BEFORE = 1.5  # the loss before the jump at most this x the first eval loss: the two measured alike


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


# A training loss summed over k accumulated micro-batches sits at about k x the eval loss (a mean over the same kind
# of tokens): from k/2 to 1.5 k, wide enough for a training loss a little above or under the eval loss
ACCUMULATION_BAND = (0.5, 1.5)


def summed_over_accumulation(metrics: Metrics, accumulation) -> bool:
    """Whether the training loss sits within `ACCUMULATION_BAND` x `accumulation` times the eval loss at every
    evaluation, two or more: the logged training loss is the sum over the accumulated micro-batches (a trainer that
    adds them up without dividing, as transformers 4.46-4.47 did, or a model whose loss the Trainer takes for one
    normalised by the batch's token count), not a per-token mean. Fewer evaluations than `detect_train_eval_mismatch`
    needs do here, since the ratio must also be the number of accumulation steps the run states (Jinyeop3110's
    Qwen3 LoRA: 17.44 at step 10, its eval loss 3.39 and 3.33 at 250 and 500 against a training loss 4.0x them, 4
    accumulation steps)."""
    if isinstance(accumulation, bool) or not isinstance(accumulation, (int, float)) or accumulation < 2:
        return False
    pairs = train_eval_pairs(metrics)
    if len(pairs) < _MIN_SUMMED_PAIRS or np.any(pairs["eval"].to_numpy() <= 0):
        return False
    ratios = pairs["train"].to_numpy() / pairs["eval"].to_numpy()
    low, high = (bound * accumulation for bound in ACCUMULATION_BAND)
    return bool(np.all((ratios >= low) & (ratios <= high)))


_MIN_SUMMED_PAIRS = 2  # one evaluation could sit anywhere; two at the same multiple of it are a scale
