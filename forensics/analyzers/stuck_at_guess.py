"""Never learned, a language model at its guess: every logged loss at ln(vocabulary) for a hundred updates and more
(`detect_stuck_at_vocabulary_guess`), a run that made no update with its eval loss at that guess
(`detect_no_update_at_the_guess`), a segment that logged only held-out losses, all at that guess a hundred logged
iterations in (`detect_eval_at_the_guess`), or a model from random weights whose loss did not fall over a whole epoch
while its held-out loss rose (`detect_stuck_from_scratch`)."""
from __future__ import annotations

import math

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .fall_measure import fell_clearly
from .metrics import LOSS, Metrics, finite, format_number, is_preference_log, real_loss
from .no_training_loss import summary_at_step_zero
from .overfitting import EVAL_LOSS
from .unmoved import FROM_THE_START, never_learned_finding


def detect_stuck_at_vocabulary_guess(metrics: Metrics, vocab_size: int | None) -> list[Finding]:
    """One `never_learned` error when the vocabulary size is known and every logged loss, up to step
    `STUCK_FROM` or later, sits within 1% of ln(vocabulary): a language model that kept guessing uniformly
    for a hundred updates and more (two points are enough when the level is known), or []."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if not isinstance(vocab_size, int) or vocab_size < 2 or loss is None or len(loss) < 2:
        return []
    if is_preference_log(metrics) or int(loss.index[-1]) < STUCK_FROM:
        return []
    level = math.log(vocab_size)
    values = loss.to_numpy()
    if np.any(np.abs(values - level) > _VOCAB_TOLERANCE * level):
        return []
    message = (f"the model never learned: every logged loss ({format_number(values.min())} to "
               f"{format_number(values.max())}, steps {int(loss.index[0])} to {int(loss.index[-1])}) sits at "
               f"ln {vocab_size} = {format_number(level)}, a uniform guess over the model's vocabulary. Check that "
               "the weights were loaded, that parameters require gradients, the learning rate, and that the model "
               "is big enough to learn anything (a test-size config?).")
    return [never_learned_finding(loss, message, {"level": level, "vocab_size": vocab_size,
                                                  "reason": "at ln(vocabulary)"})]


def detect_no_update_at_the_guess(metrics: Metrics, vocab_size: int | None) -> list[Finding]:
    """One `never_learned` error at step 0 for a run that made no optimizer step (its closing summary at step 0,
    `summary_at_step_zero`) and whose every eval loss sits at `_AT_THE_GUESS` x ln(vocabulary) or above: the model it
    saved is the one it loaded, and that model predicts the held-out tokens no better than a uniform guess over its
    vocabulary. Unusable as it ended, and nothing was learned; else []."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if not isinstance(vocab_size, int) or vocab_size < _TOKEN_VOCABULARY or evals is None or not len(evals) \
            or not summary_at_step_zero(metrics):
        return []
    level = math.log(vocab_size)
    if float(evals.min()) < _AT_THE_GUESS * level:
        return []
    message = (f"the model never learned: no optimizer step ran (the Trainer's closing summary was written at global "
               f"step 0, so the saved model is the one the run loaded), and its eval loss, "
               f"{format_number(float(evals.iloc[-1]))}, sits at ln {vocab_size} = {format_number(level)}, a uniform "
               "guess over the model's vocabulary. Check that an epoch holds at least one gradient-accumulation cycle "
               "of batches, that the weights were loaded, and the data's labels.")
    return [Finding("never_learned", "error", 0, message, end_step=int(evals.index[-1]), metric=EVAL_LOSS,
                    evidence={"level": level, "vocab_size": vocab_size, "eval_loss": float(evals.iloc[-1]),
                              "optimizer_steps": 0, "reason": "no update, eval at ln(vocabulary)"})]


def detect_eval_at_the_guess(metrics: Metrics, vocab_size: int | None) -> list[Finding]:
    """One `never_learned` error from the segment's first logged step where the run's own files give its vocabulary
    (`SMALLEST_VOCABULARY` tokens or more), it logged no training loss, and every held-out loss, the last after
    `STUCK_FROM` logged iterations or more (each logged step one iteration at least), sits within `_VOCAB_TOLERANCE` of
    ln(vocabulary): the model still guesses uniformly after a hundred updates and more, where one that learns leaves
    that level within tens of them (Vishal-Padia_llama-from-scratch's last train() call: 'validation loss: 4.158'
    after 100 printed iterations, ln 65 = 4.174). Even the token frequencies alone, learned first, sit well under
    ln V (0.7-0.8 of it); else []."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    loss = real_loss(metrics) if LOSS in metrics else None
    if not isinstance(vocab_size, int) or vocab_size < SMALLEST_VOCABULARY or evals is None or not len(evals) \
            or (loss is not None and len(loss)):
        return []
    level, first = math.log(vocab_size), _first_logged_step(metrics)
    iterations = int(evals.index[-1]) - first + 1
    if iterations < STUCK_FROM or np.any(np.abs(evals.to_numpy() - level) > _VOCAB_TOLERANCE * level):
        return []
    points = "its one held-out loss" if len(evals) == 1 else f"every one of its {len(evals)} held-out losses"
    message = (f"the model never learned: no training loss was logged, and {points} "
               f"({format_number(float(evals.iloc[-1]))} at step {int(evals.index[-1])}, after {iterations} logged "
               f"iterations from step {first}) sits at ln {vocab_size} = {format_number(level)}, a uniform guess over "
               "the model's vocabulary, where a model that learns leaves it within tens of updates. Check that the "
               "optimizer holds the parameters of the model trained and evaluated, that they require gradients, and "
               "the learning rate.")
    return [Finding("never_learned", "error", first, message, end_step=int(evals.index[-1]), metric=EVAL_LOSS,
                    evidence={"level": level, "vocab_size": vocab_size, "eval_loss": float(evals.iloc[-1]),
                              "logged_iterations": iterations, "reason": "eval at ln(vocabulary), no training loss"})]


def _first_logged_step(metrics: Metrics) -> int:
    """The first step any metric of the log holds (the segment's start: its learning rate is logged from there)."""
    return min(int(finite(series).index.min()) for series in metrics.values() if len(finite(series)))


SMALLEST_VOCABULARY = 32  # tokens: under this (a few classes, digits) ln V is a classifier's or a fine-tune's level


# an eval loss this share of ln V or above: no better than the guess (token frequencies give 0.7-0.8)
_AT_THE_GUESS = 0.9
_TOKEN_VOCABULARY = 1000  # (a character vocabulary's guess is low enough that its frequencies sit near it)


STUCK_FROM = 100  # a from-scratch loss leaves ln(vocabulary) within tens of updates
_HELD_OUT_WORSE = 1.03  # the last held-out loss this many times the first: the model got worse on unseen text


def detect_stuck_from_scratch(metrics: Metrics, thresholds: Thresholds, epoch_means: bool = False) -> list[Finding]:
    """One `never_learned` error for a model trained from random weights (the run profile says so; the caller
    asks) whose training loss did not fall over a whole epoch and more while its held-out loss rose (`_held_out_rose`):
    it learned the token frequencies in its first steps (the loss leaves ln(vocabulary) within tens of updates) and
    nothing after, and got worse on text it had not seen. Without a held-out loss the log cannot tell a plateau from a
    stall: `no_learning_evidence` says so. `epoch_means`: each logged loss is the mean over one whole epoch, the first
    from the run's start (Keras's `model.fit` lines at steps 1, 2, ...), so two lines are a whole epoch and more
    logged from the start, whatever epoch counter the log holds beside them."""
    from .learning_evidence import EVAL_LOSS, learning_shown  # the same measure of a falling loss
    loss = real_loss(metrics) if LOSS in metrics else None
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else None
    if loss is None or len(loss) < thresholds.never_learned_points or evals is None or len(evals) < 3 \
            or not (epoch_means or _whole_epoch_from_the_start(epochs)) or learning_shown(metrics, thresholds) \
            or fell_clearly(loss, thresholds)[0]:
        # a log that starts later (a resume) may have learned before it: a plateau, not a stall; a training loss
        # that fell clearly beside a held-out loss that never did (which `learning_shown` reads as no evidence) is a
        # model that fitted its data, not one stuck (Unilmalas_TextAI's Keras LSTM: 6.93 -> 0.005, val 7.01 -> 9.61)
        return []
    rose = _held_out_rose(evals)
    if rose is None:
        return []
    level = float(np.median(loss.to_numpy()))
    span = f"{len(loss)} lines, one an epoch" if epoch_means else f"epoch {format_number(float(epochs.max()))}"
    message = (f"the model never learned beyond its first steps: trained from random weights, its loss stayed at about "
               f"{format_number(level)} from step {int(loss.index[0])} to step {int(loss.index[-1])} ({span}) without "
               f"falling, while the held-out loss rose {rose}: what it learned before the first logged point (at most "
               "the tokens' frequencies, from random weights) is all it learned, and later updates made it worse on "
               "unseen text. Check the learning rate and its "
               "schedule, the initialisation, and that the inputs and labels are shifted as the model expects.")
    return [never_learned_finding(loss, message, {"level": level, "reason": "stuck from scratch, held-out loss rising",
                                     "eval_first": float(evals.iloc[0]), "eval_last": float(evals.iloc[-1])})]


def _whole_epoch_from_the_start(epochs) -> bool:
    """The log's epoch counter runs from the run's first tenth of an epoch (`FROM_THE_START`) to a whole epoch or
    more."""
    return epochs is not None and len(epochs) > 0 and float(epochs.max()) >= 1.0 \
        and float(epochs.min()) <= FROM_THE_START


_HALVES_FROM = 8  # evaluations: from this many, the medians of the two halves are read as well as the ends


def _held_out_rose(evals) -> str | None:
    """How the held-out loss rose, said as a clause, or None: the last evaluation `_HELD_OUT_WORSE` x the first or
    more, or, over `_HALVES_FROM` evaluations or more, the later half's median that much over the first half's (a
    noisy held-out loss whose ends happen to agree: Asocsar_GPT2's Keras GPT-2 from scratch, val 186.4 at its first
    epoch and 187.7 at its 16th, medians 178.1 -> 192.1 over the two halves)."""
    first, last = float(evals.iloc[0]), float(evals.iloc[-1])
    if last >= _HELD_OUT_WORSE * first:
        return f"{format_number(first)} -> {format_number(last)}"
    half = len(evals) // 2
    early, later = float(evals.iloc[:half].median()), float(evals.iloc[half:].median())
    if len(evals) < _HALVES_FROM or later < _HELD_OUT_WORSE * early:
        return None
    return (f"from a median of {format_number(early)} over the first half of its {len(evals)} evaluations to "
            f"{format_number(later)} over the later half ({format_number(first)} -> {format_number(last)} at the ends)")


_VOCAB_TOLERANCE = 0.01
