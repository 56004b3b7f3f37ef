"""Learning evidence beyond the loss falling over the log: an accuracy that rose, a fall before the log began or
within its first window.

Where the loss's own fall over the log (`fall_measure.fell_clearly`) does not show learning, these may: a held-out
accuracy risen by `ACCURACY_RISE` (`accuracy_rose`), a training token accuracy risen by the same measure a loss
falls by (`token_accuracy_rose`), the run's closing mean loss above the logged tail's (`fell_before_the_log`), a
first window's mean standing well above every later one, or above them with the prediction entropy logged beside it
standing well above its own (`fell_in_the_first_window`), the running mean a console
prints beside each batch's loss fallen clearly (`running_mean_fell`), the mean loss of each of three epochs or more
lower than the one before (`epoch_means_fell`), or one turn of a loss that swings by turns lower at every point
(`a_turn_fell_at_every_point`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from .fall_measure import (WINDOW_FALL, WINDOW_STEPS, LearningEvidence, evidence_from, fell_clearly,
                           pair_means_if_alternating, starts_mid_run, swings_by_turns, window_means, without_blips)
from .metrics import EVAL_ACCURACY_KEYS, LOSS, TRAIN_LOSS, Metrics, finite, format_number, point_noise

_EMPTY = pd.Series(dtype="float64")


_WHOLE_RUN_ABOVE = 0.05  # the run's own mean loss this share above the logged tail's: the unlogged start was higher


def fell_before_the_log(metrics: Metrics, loss) -> LearningEvidence | None:
    """A log of the run's tail (its first loss `_LATE_START` logging intervals or more after step 0) whose closing
    summary's train_loss, the Trainer's mean over every step of the run, sits `_WHOLE_RUN_ABOVE` or more above the
    mean of the logged losses: the steps before the log had a higher loss, so it came down before the log begins
    (hungh's Qwen2.5-1.5B QLoRA README: steps 160-300 at 0.53-0.59, mean 0.55, train_loss 0.6024); else None."""
    summary = finite(metrics["train_loss"]) if "train_loss" in metrics else _EMPTY
    if len(summary) != 1 or len(loss) < 3:
        return None
    whole, tail = float(summary.iloc[0]), float(loss.mean())
    if not starts_mid_run(loss) or tail <= 0 or whole < (1 + _WHOLE_RUN_ABOVE) * tail:
        return None
    said = (f"the run's mean loss over all its steps (train_loss {format_number(whole)}) is above the logged steps' "
            f"mean {format_number(tail)} (steps {int(loss.index[0])} to {int(loss.index[-1])}): the loss came down "
            "before the log begins")
    return LearningEvidence("train_loss", whole, tail, int(len(loss)), int(loss.index[0]), int(loss.index[-1]), said)


def fell_by_the_last_window(metrics: Metrics, loss) -> LearningEvidence | None:
    """The unlogged last window's mean (`unlogged_last_window`) the lowest window of the run and `WINDOW_FALL` or more
    under the first: the fall two window means show on their own (`two_windows_fell`), with the closing summary giving
    the last one (Jayveersinh-Raj's BLOOM-7b1 LoRA, logging every 100 of 380 steps: 0.3723, 0.4232, 0.3327 logged,
    train_loss 0.3511, so steps 301-380 averaged 0.258, 31% under the first window); else None."""
    last = unlogged_last_window(metrics, loss)
    first = float(loss.iloc[0]) if len(loss) else 0.0
    if last is None or not 0 < last < float(loss.min()) or last > (1 - WINDOW_FALL) * first:
        return None
    summary = finite(metrics[TRAIN_LOSS])
    end = int(summary.index[0])
    said = (f"the closing summary's mean over all {end} steps (train_loss {format_number(float(summary.iloc[0]))}) "
            f"less the logged windows leaves the unlogged last window (steps {int(loss.index[-1]) + 1} to {end}) a "
            f"mean of {format_number(last)}, the lowest of the run and under the first window's {format_number(first)}")
    return LearningEvidence(LOSS, first, last, int(len(loss)) + 1, int(loss.index[0]), end, said)


def unlogged_last_window(metrics: Metrics, loss) -> float | None:
    """The mean loss of the steps after the last logged one, from the Trainer's closing train_loss (the mean of every
    step's loss over the run, logged at its last step N): N x train_loss less the logged windows' sums, over the steps
    left. Only where the arithmetic holds: each logged loss is the mean of its logging window, at a regular interval L
    from step L on (the Trainer logs the mean since the last log, every logging_steps); the steps left are fewer than L
    (else a log would have come) and `WINDOW_STEPS` or more (a mean, not a batch; the 4-digit rounding of the values
    moves Jayveersinh-Raj's by 0.0004 at most); and no eval loss is logged (an epoch table's rows, AkshayPethe's, show
    the last window logged before each evaluation, not the mean of the steps between the rows). Else None."""
    summary = finite(metrics[TRAIN_LOSS]) if TRAIN_LOSS in metrics else _EMPTY
    if len(summary) != 1 or len(loss) < 2 or "eval_loss" in metrics:
        return None
    steps = loss.index.to_numpy(dtype="int64")
    interval, end, last = int(steps[0]), int(summary.index[0]), int(steps[-1])
    if interval < WINDOW_STEPS or not bool(np.all(np.diff(steps) == interval)) \
            or not WINDOW_STEPS <= end - last < interval:
        return None
    return (end * float(summary.iloc[0]) - interval * float(loss.sum())) / (end - last)


# The first window's mean this many noise units above the level of every later window: on flat logs of 20-40 Gaussian
# windows the first stands 2.5 units up by chance in 1.2-1.9% of runs (the noise and level are estimates, not the
# 1 in 160 of a known sigma), 3 units in 0.4-0.9%.
_FIRST_WINDOW_Z = 3.0
_FIRST_WINDOW_MIN_POINTS = 20  # ... in a log of this many windows or more, so that the later level is well known ...
_FIRST_WINDOW_FALL = 0.1  # ... and this share under the first: a few percent is a hard first batch, not learning


def fell_in_the_first_window(metrics: Metrics, loss, thresholds: Thresholds) -> LearningEvidence | None:
    """A log of window means (`window_means`) that starts at the run's start (not `starts_mid_run`) and whose first
    window stands `_FIRST_WINDOW_Z` noise units (one point's) and `_FIRST_WINDOW_FALL` above the median of all the
    windows after it: the loss came down within the first window. One pre-chosen point against a level known from
    `_FIRST_WINDOW_MIN_POINTS` windows or more is a one-point test; where a token accuracy is logged, its first window
    must sit under the later level too, by its own noise. A first window under the `_FIRST_WINDOW_Z` units but by the
    share above is read with the prediction entropy logged beside it (`_entropy_fell_in_the_first_window`). A log
    that begins mid-run has no run start in its first window: a resume's first window up is the optimizer settling,
    not the loss coming down. Else None."""
    # (a loss swinging by turns is read in pairs, as `fell_clearly` reads it: the swing is no noise to measure the
    # first by)
    values = pair_means_if_alternating(without_blips(loss)).to_numpy(dtype="float64")
    if len(values) < _FIRST_WINDOW_MIN_POINTS or not window_means(loss) or starts_mid_run(loss):
        return None
    first, later = float(values[0]), float(np.median(values[1:]))
    if not _accuracy_agrees(metrics):
        return None
    if _stands_above(first, later, values, thresholds):
        return evidence_from(LOSS, loss, first, later)
    return _entropy_fell_in_the_first_window(metrics, loss, (first, later), thresholds)


def _stands_above(first: float, later: float, values: np.ndarray, thresholds: Thresholds) -> bool:
    noise = point_noise(values)
    return noise > 0 and first - later >= _FIRST_WINDOW_Z * noise and _fell_by_the_share(first, later, thresholds)


def _fell_by_the_share(first: float, later: float, thresholds: Thresholds) -> bool:
    return later < (1 - max(_FIRST_WINDOW_FALL, thresholds.learning_min_fall)) * first


# TRL's SFTTrainer logs `entropy` beside the loss: the mean entropy of the model's own predicted distribution over the
# batch's target tokens
PREDICTION_ENTROPY = "entropy"


def _entropy_fell_in_the_first_window(metrics: Metrics, loss, levels: tuple[float, float],
                                      thresholds: Thresholds) -> LearningEvidence | None:
    """The loss's first window `_FIRST_WINDOW_FALL` above the later windows' level (`levels`: the first window's and
    the later median) but under `_FIRST_WINDOW_Z` of its noise units, where the logged prediction entropy, window for
    window beside it, stands above its own later level by the full one-point test (`_stands_above`): the model's
    predictions sharpened within the first window (F-Bafti_llama-qlora's TRL QLoRA of Llama-3.2-3B, 47 windows: loss
    0.717 against 0.578, 2.5 units; entropy 0.763 against 0.57, 4.2 units; token accuracy 0.817 against 0.84).
    Why the entropy and not the token accuracy beside the loss: both are read off the same batches, and across this
    run's later windows the accuracy goes with the loss at r = -0.85 (the entropy at +0.88), so two of them a couple
    of units up together are about as likely by chance as the loss alone (a hard first batch moves all three). The
    entropy passing the one-point test at the loss's bar is as rare by chance as the loss passing it: simulated on flat
    logs of 20-60 Gaussian windows at this run's levels and noises, the entropy going with the loss at r 0.5-0.88,
    this rule adds 0.2-0.5% of runs to the 0.3-0.9% the loss's own test lets through. The loss must have fallen by the
    share too: an entropy that drops while the loss holds is a model growing sure, not one learning its data. Else
    None."""
    entropy = finite(metrics[PREDICTION_ENTROPY]) if PREDICTION_ENTROPY in metrics else _EMPTY
    entropy = entropy[entropy.index.isin(loss.index)]
    first, later = levels
    if len(entropy) < _FIRST_WINDOW_MIN_POINTS or int(entropy.index[0]) != int(loss.index[0]) \
            or not _fell_by_the_share(first, later, thresholds):
        return None
    values = entropy.to_numpy(dtype="float64")
    entropy_first, entropy_later = float(values[0]), float(np.median(values[1:]))
    if not _stands_above(entropy_first, entropy_later, values, thresholds):
        return None
    said = (f"the loss's first window stands above the level of the windows after it "
            f"({format_number(first)} against {format_number(later)}), and the model's prediction entropy, logged "
            f"beside it, clearly so ({format_number(entropy_first)} against {format_number(entropy_later)}, "
            f"{(entropy_first - entropy_later) / point_noise(values):.1f} times its noise): the predictions "
            "sharpened within the first window")
    return LearningEvidence(LOSS, first, later, int(len(loss)), int(loss.index[0]), int(loss.index[-1]), said)


def _accuracy_agrees(metrics: Metrics) -> bool:
    """No token accuracy logged, or its first window under the median of the later ones, by one noise unit or more
    (a log of two accuracies, or a smooth one, has no noise to measure by: there it must be under at all)."""
    name = next((key for key in TOKEN_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]).to_numpy(dtype="float64") if name else np.empty(0)
    if len(accuracy) < 2:
        return True
    rise = float(np.median(accuracy[1:])) - float(accuracy[0])
    return rise > 0 and rise >= point_noise(accuracy)


_EPOCHS_SEEN = 3  # whole passes over the data, each with ...
_POINTS_AN_EPOCH = 2  # ... this many logged losses or more: each epoch's mean is a mean, not one batch


def epoch_means_fell(metrics: Metrics, loss, thresholds: Thresholds) -> LearningEvidence | None:
    """A short multi-epoch log whose per-epoch mean loss is lower at each of `_EPOCHS_SEEN` epochs or more than at the
    one before (by `learning_min_fall` from the first epoch's to the last's in all), its last point the lowest it
    logged; else None. Where each epoch's first batches sit above its last (the zig-zag a reshuffled pass makes),
    point-to-point noise measured over so few points is mostly that structure, and a fall of a couple of its units
    reads as chance; the epochs' means, each over the same data, falling in order (1 in 6 by chance for three) with
    the run ending on its lowest point (about 1 in n) is the run learning. A point logged at an epoch's end (epoch
    1.0) closes that epoch's window and counts to it."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    if epochs is not None:  # (a step's eval record carries the epoch too: one value a step)
        epochs = epochs[~epochs.index.duplicated(keep="last")].reindex(loss.index)
    if epochs is None or epochs.isna().any() or len(loss) < _EPOCHS_SEEN * _POINTS_AN_EPOCH:
        return None
    groups = loss.groupby(np.ceil(epochs.to_numpy(dtype="float64")) - 1)
    means, sizes = groups.mean(), groups.size()
    first, last = float(means.iloc[0]), float(means.iloc[-1])
    if len(means) < _EPOCHS_SEEN or int(sizes.min()) < _POINTS_AN_EPOCH or not bool(np.all(np.diff(means) < 0)) \
            or float(loss.iloc[-1]) > float(loss.min()) or not last < (1 - thresholds.learning_min_fall) * first:
        return None
    said = (f"the mean loss of each epoch fell at every epoch ({', '.join(format_number(float(m)) for m in means)} "
            f"over {len(means)} epochs) and the last logged loss, {format_number(float(loss.iloc[-1]))}, is the lowest")
    return LearningEvidence(LOSS, first, last, int(len(loss)), int(loss.index[0]), int(loss.index[-1]), said)


ACCURACY_RISE = 0.1  # a held-out accuracy this far above where it was first evaluated: the model learned


def accuracy_rose(metrics: Metrics) -> LearningEvidence | None:
    """A held-out accuracy that rose clearly (by `ACCURACY_RISE`) from its first evaluation to its last (a reward
    model's share of pairs ranked right, a classifier's), or None."""
    name = next((key for key in EVAL_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]) if name else _EMPTY
    if len(accuracy) < 2 or float(accuracy.iloc[-1]) < float(accuracy.iloc[0]) + ACCURACY_RISE:
        return None
    return evidence_from(name, accuracy, float(accuracy.iloc[0]), float(accuracy.iloc[-1]))


TOKEN_ACCURACY_KEYS = ("mean_token_accuracy", "token_acc")  # TRL's SFT, ms-swift: over the training batches


def token_accuracy_rose(metrics: Metrics, thresholds: Thresholds) -> LearningEvidence | None:
    """The training token accuracy risen clearly, by the measure a loss's fall is read by (`fell_clearly`, on the
    accuracy turned over), or None: the share of target tokens predicted right going up is the model learning them,
    whatever the loss's noise hides. One that moved no more than its own noise (a first window a little under the
    rest) is no evidence."""
    name = next((key for key in TOKEN_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]) if name else _EMPTY
    if len(accuracy) < thresholds.learning_min_points:
        return None
    rose, head, tail = fell_clearly(-accuracy, thresholds)
    return evidence_from(name, accuracy, -head, -tail) if rose else None


# The running mean of the loss a console prints beside each batch's own (fairseq-py's legacy `loss=1.27 (1.50)`,
# gpt-2-simple's `avg=`, DLLogger's `average_loss`): the readers' name for it
RUNNING_MEAN = "loss_avg"


def running_mean_fell(metrics: Metrics, thresholds: Thresholds) -> LearningEvidence | None:
    """The printed running mean of the loss fallen clearly (`fell_clearly`), or None: a mean over the epoch's batches
    so far has the batches' noise averaged out, so a fall the batch losses' noise hides shows in it (a few points a
    thousand batches apart, each batch loss anywhere within +-30% of the mean)."""
    mean = finite(metrics[RUNNING_MEAN]) if RUNNING_MEAN in metrics else _EMPTY
    if len(mean) < thresholds.learning_min_points:
        return None
    fell, head, tail = fell_clearly(mean, thresholds)
    return evidence_from(RUNNING_MEAN, mean, head, tail) if fell else None


_TURN_POINTS = 5  # a turn's own points (every other logged loss), each lower than the one before, over this many ...
_TURN_FALL = 0.1  # ... and its last this share under its first


def a_turn_fell_at_every_point(loss) -> LearningEvidence | None:
    """A training loss that swings by turns (`swings_by_turns`: batches grouped by length, long and short answers
    logged in turn), one of whose turns - its 1st, 3rd, 5th ... points, or its 2nd, 4th ... - is lower at every point
    than at the one before, over `_TURN_POINTS` points or more and by `_TURN_FALL` in all, while the other turn ends no
    higher than it began; else None. Each turn compares like with like (windows of the same make-up); the swing between
    them is no noise, so `fell_clearly`, measuring noise point to point, reads the fall as chance (Prishi99's Llama-2
    QLoRA, TRL with group_by_length: 1.408, 1.663, 1.214, 1.444, 1.177, 1.366, 1.174, 1.468, 1.158, 1.542; its odd rows
    1.408 -> 1.158 at every row, -18%, its even rows 1.663 -> 1.542).
    Calibration: on flat logs of 10 points of independent noise, a swing by turns and a turn lower at every point come
    together in 0.07% of runs (0.08% of 12, none in 400,000 of 20), before the 10% fall is asked. Of the corpus's 1,090
    logs only Prishi99's swing by turns with a turn lower at every point; the non-learning ones whose points sit by
    turns on either side of their neighbours' mean (onlyjokers' GLSLMaker, user074's PRM, tensor2tensor #67, CPM-2 #11,
    aryan-gupta7's SCLR) neither swing at every step nor have a turn falling at every point (2 to 55 rises in each).
    For the training loss only: a reward or an accuracy is judged by `fell_clearly` alone."""
    values = loss.to_numpy(dtype="float64")
    if not swings_by_turns(values):
        return None
    for start in (0, 1):
        turn, other = values[start::2], values[1 - start::2]
        if lower_at_every_point(turn) and not float(other[-1]) > float(other[0]):
            said = (f"the loss swings by turns (batches of different make-up logged in turn); one turn alone, every "
                    f"other logged point from step {int(loss.index[start])}, fell at each of its points, "
                    f"{format_number(float(turn[0]))} -> {format_number(float(turn[-1]))} over {len(turn)}, and the "
                    "other ended no higher than it began")
            return LearningEvidence(LOSS, float(turn[0]), float(turn[-1]), int(len(loss)), int(loss.index[0]),
                                    int(loss.index[-1]), said)
    return None


def lower_at_every_point(turn: np.ndarray) -> bool:
    return len(turn) >= _TURN_POINTS and turn[0] > 0 and bool(np.all(np.diff(turn) < 0)) \
        and float(turn[-1]) <= (1 - _TURN_FALL) * float(turn[0])
