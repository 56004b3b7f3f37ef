"""No "healthy" without evidence: did the loss of an SFT or pre-training log actually fall?

VERDICTS.md: healthy is not "no finding fired"; the data must show a run that learned. For an
LM loss that evidence is the loss (or the eval loss) ending clearly below where it started: the
median of the last tenth of the logged points below the median of the first tenth by at least
`learning_min_fall` (an eval loss also where it is lower at every evaluation, by a few percent in all); or a
held-out accuracy rising by `ACCURACY_RISE` (a reward model ranking more pairs right, a classifier). When it did
not, or when only a couple of points were logged, the run gets a `no_learning_evidence` warning that says what was
seen. In an RL log (GRPO, PPO) the loss is near 0 by construction and the reward is the evidence: it must end
clearly above where it started. A pairwise preference log (DPO and kin) learned when the pairs are told apart: its
loss ends clearly under ln 2 (fallen, and
`PAIRWISE_CLEAR` under it, or many times its own noise under it with the reward margin rising clearly) or its reward
accuracy ends at `PAIRWISE_ACCURATE` or more (a training accuracy having risen by `PAIRWISE_RISE` from the log's first
tenth: a few pairs a batch are noisy); where the log holds a held-out evaluation, that evaluation must show it (a
training accuracy that rose while the held-out loss stayed at ln 2 is no evidence the preference carries over), unless
it is a couple of evaluations that all moved the right way. A loss stuck at ln 2 with nothing moving is `never_learned`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from ..metric_names import OPTIMIZER_STEP
from .fall_measure import (LearningEvidence, came_back_up, evidence_from, fell_clearly, later_windows_fell,
                           pair_means_if_alternating, starts_mid_run, two_windows_fell, window_means, without_blips)
from .held_out_fall import held_out_fell, held_out_never_fell
from .metrics import LOSS, TRAIN_LOSS, Metrics, finite, format_number, is_preference_log, point_noise, real_loss
from .no_training_loss import LOG_MORE_OFTEN, eval_only, eval_only_memorized
from .preference_pairs import (held_out_must_show, is_pairwise_log, is_rl_without_reward, pairs_not_told_apart,
                               pairs_told_apart)
from .reward_decline import reward_metric
from .secondary_evidence import (a_turn_fell_at_every_point, accuracy_rose, epoch_means_fell, fell_before_the_log,
                                 fell_by_the_last_window, fell_in_the_first_window, running_mean_fell,
                                 token_accuracy_rose)

EVAL_LOSS = "eval_loss"
REWARD = "reward"  # a bare `reward`: an RL policy's return, or the score a reward model prints (`for_a_reward_model`)
# A per-step RL reward is the mean over a few sampled groups: far noisier than a loss. Its rise over the run is
# read by the least-squares trend at 2.5 standard errors (one-sided p < 0.01), not 3.
REWARD_TREND_Z = 2.5
_EMPTY = pd.Series(dtype="float64")


def _no_update(metrics: Metrics) -> pd.Series | None:
    """The optimizer step of a log that prints one beside its iteration, where it reads the same on every line
    (two or more): no update happened between the lines, so nothing in them can show learning; else None."""
    steps = finite(metrics[OPTIMIZER_STEP]) if OPTIMIZER_STEP in metrics else _EMPTY
    return steps if len(steps) >= 2 and float(steps.min()) == float(steps.max()) else None


def learning_shown(metrics: Metrics, thresholds: Thresholds) -> LearningEvidence | None:
    """The evidence that the run learned, or None where its log does not show it (the same measure as
    `detect_no_learning_evidence`, which warns in that case)."""
    if _no_update(metrics) is not None:
        return None
    if is_pairwise_log(metrics) and reward_metric(metrics) is None:
        held_out, train = pairs_told_apart(metrics, thresholds)
        return held_out if held_out_must_show(metrics, thresholds) else train
    reward_name = reward_metric(metrics)
    if reward_name is not None:
        reward = finite(metrics[reward_name])
        if len(reward) < thresholds.learning_min_points:
            return None
        rose, head, tail = fell_clearly(-reward, thresholds, REWARD_TREND_Z)
        if not rose and _rose_from_its_lowest_to_its_highest(reward, thresholds):
            return evidence_from(reward_name, reward, float(reward.iloc[0]), float(reward.iloc[-1]))
        return evidence_from(reward_name, reward, -head, -tail) if rose else None
    if is_rl_without_reward(metrics):
        return None  # its loss (near 0 by construction) shows nothing learned
    return _losses_show_learning(metrics, thresholds)


# A reward log this long or longer whose first point is its lowest and its last its highest rose (`_RANK_POINTS`)
_RANK_POINTS = 10


def _rose_from_its_lowest_to_its_highest(reward: pd.Series, thresholds: Thresholds) -> bool:
    """Whether a reward log of `_RANK_POINTS` points or more starts on its lowest point and ends on its highest, by
    `learning_min_fall` of its start or more. An RL log's first step scores the untouched policy's rollouts; on n
    points of noise with no trend the first is the lowest and the last the highest together 1 time in n(n - 1) (1.1%
    of 10 points, about the rate the loss's own rank-and-trend rule allows: fall_measure `_trend_to_its_lowest`), and
    a few sampled groups a step make a reward too noisy for a 10-point trend to clear 2.5 standard errors where
    the policy did improve: yuzhaouoe_GUI-Cursor-Moving's verl GRPO, critic/score/mean 0.572 at step 1, 0.68-0.83
    after, 0.834 at step 10 (its unfiltered all-failed group share 0.56 -> 0.15), a trend of 1.7 units."""
    values = reward.to_numpy(dtype="float64")
    if len(values) < _RANK_POINTS:
        return False
    first, last = float(values[0]), float(values[-1])
    return bool(first < values[1:].min() and last > values[:-1].max()
                and last - first > thresholds.learning_min_fall * abs(first))


def _losses_show_learning(metrics: Metrics, thresholds: Thresholds) -> LearningEvidence | None:
    """The evidence an SFT or pre-training log learned: its loss or eval loss fallen clearly, the eval loss lower at
    every evaluation, two window means fallen, or one of the secondary measures (secondary_evidence.py); else None.
    The one list of checks: `learning_shown` gives what it finds as the healthy evidence, and
    `detect_no_learning_evidence` warns on a log of `learning_min_points` or more where it finds none. A held-out loss
    that never improved (`held_out_never_fell`) leaves only a held-out accuracy as evidence: a training loss falling
    beside it is the model fitting its training data, not learning what carries to data it has not seen."""
    if held_out_never_fell(finite(metrics.get(EVAL_LOSS, _EMPTY))):
        return accuracy_rose(metrics)
    for name in (LOSS, EVAL_LOSS):
        series = real_loss(metrics) if name == LOSS and LOSS in metrics else finite(metrics.get(name, _EMPTY))
        if len(series) >= max(2, thresholds.learning_min_points if name == LOSS else 2):
            fell, head, tail = fell_clearly(series, thresholds)
            if fell:
                return evidence_from(name, series, head, tail)
    evals = finite(metrics.get(EVAL_LOSS, _EMPTY))
    if held_out_fell(evals):
        return evidence_from(EVAL_LOSS, evals, float(evals.iloc[0]), float(evals.iloc[-1]))
    loss = real_loss(metrics) if LOSS in metrics else _EMPTY
    if two_windows_fell(loss, metrics.get("epoch")):
        return evidence_from(LOSS, loss, float(loss.iloc[0]), float(loss.iloc[-1]))
    return accuracy_rose(metrics) or token_accuracy_rose(metrics, thresholds) or fell_before_the_log(metrics, loss) \
        or fell_in_the_first_window(metrics, loss, thresholds) or running_mean_fell(metrics, thresholds) \
        or epoch_means_fell(metrics, loss, thresholds) or fell_by_the_last_window(metrics, loss) \
        or a_turn_fell_at_every_point(loss) or later_windows_fell(loss, LOSS) or later_windows_fell(evals, EVAL_LOSS)


def _short_pairwise_log_told_apart(metrics: Metrics, loss, thresholds: Thresholds) -> bool:
    """A pairwise log of a couple of window means, whose pairs are told apart (klix18's TRL DPO: 0.678 at step 10,
    0.652 at step 20). A DPO loss starts at ln 2 exactly, the policy being its reference; a mean over ten steps or
    more clearly under it is the policy preferring the chosen answers, not the noise of one batch."""
    return is_pairwise_log(metrics) and window_means(loss) and learning_shown(metrics, thresholds) is not None


def detect_no_learning_evidence(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_evidence` warning when the log does not show the loss (in RL, the reward) moving the
    right way, or []."""
    if _no_update(metrics) is not None:
        return _no_update_between(metrics)
    reward_name = reward_metric(metrics)
    if reward_name is not None and len(finite(metrics[reward_name])) >= thresholds.learning_min_points:
        # RL: the reward shows learning, not the loss (which a legacy PPO log may not hold at all)
        return _reward_did_not_rise(metrics, reward_name, thresholds)
    if LOSS not in metrics:
        return eval_only(metrics, thresholds)
    loss = real_loss(metrics)
    if is_pairwise_log(metrics) and len(loss) >= thresholds.learning_min_points:
        return pairs_not_told_apart(metrics, loss, thresholds)
    if is_rl_without_reward(metrics) and len(loss) >= thresholds.learning_min_points:
        return _rl_loss_only(loss)  # an RL log without a reward it names: its loss is no measure of learning
    if is_preference_log(metrics) and len(loss) >= thresholds.learning_min_points:
        return []  # a pairwise log whose pair metrics are the evaluation's alone: its loss is judged there
    if len(loss) < thresholds.learning_min_points:
        # too few loss points for `_losses_show_learning`'s list: a narrower one (an eval loss fallen over
        # `learning_min_points` evaluations, not two), that a short log's silence does not rest on weaker evidence
        evals = finite(metrics.get(EVAL_LOSS, loss.iloc[:0]))
        if len(loss) == 0 or len(evals) >= thresholds.learning_min_points and fell_clearly(evals, thresholds)[0] \
                or held_out_fell(evals) or accuracy_rose(metrics) is not None \
                or two_windows_fell(loss, metrics.get("epoch")) \
                or _short_pairwise_log_told_apart(metrics, loss, thresholds) \
                or fell_by_the_last_window(metrics, loss) is not None:
            return []  # (a model card's results table: a training loss at each evaluation, the eval loss falling)
        memorized = eval_only_memorized(metrics, evals, thresholds) if len(evals) else []
        if memorized:  # (a tracker's copy of the closing mean read as the one loss point)
            return memorized
        message = (f"only {len(loss)} finite loss {'point was' if len(loss) == 1 else 'points were'} logged"
                   f"{_closing_mean_said(metrics)}: too few to tell whether the run learned (log more often: "
                   f"{LOG_MORE_OFTEN}).")
        return [Finding("no_learning_evidence", "warning", int(loss.index[-1]), message, metric=LOSS,
                        evidence={"n_points": int(len(loss))})]
    if 0 < float(loss.median()) <= thresholds.memorization_level:
        return []  # a language model's loss this low has learned its data (memorization judges whether too well)
    if _losses_show_learning(metrics, thresholds) is not None:
        return []
    train_fell, head, tail = fell_clearly(loss, thresholds)
    eval_loss = finite(metrics.get(EVAL_LOSS, loss.iloc[:0]))
    if held_out_never_fell(eval_loss):
        return [_held_out_flat(loss, eval_loss, head, tail, train_fell)]
    moved = tail < head - thresholds.learning_min_fall * abs(head)
    noise = point_noise(pair_means_if_alternating(without_blips(loss)).to_numpy(dtype="float64"))  # (as read)
    said = (f"the loss fell no more than its own step-to-step noise explains (about {format_number(noise)} a point): "
            if moved else "the loss did not fall: ")
    message = (f"{said}{_ends_said(loss, head, tail)} ({len(loss)} points, steps {int(loss.index[0])} to "
               f"{int(loss.index[-1])}){_dip_said(loss)}, "
               f"{_eval_said(eval_loss)}: no evidence the run learned. {_what_to_check(loss)}")
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric=LOSS, evidence={"head": head, "tail": tail, "n_points": int(len(loss))})]


def _ends_said(loss, head: float, tail: float) -> str:
    """Where the loss began and ended as `fell_clearly` measured it: the median of its first and last tenths, or its
    very first point, said as what they are (0xafraidoftime's 10-point log: "about 1.518 over the first logged points"
    was its first point alone, 1.96 the median of its first quarter)."""
    series = pair_means_if_alternating(without_blips(loss))
    k = max(1, len(series) // 10)
    first_alone = k == 1 or head == float(series.iloc[0]) != float(series.iloc[:k].median())
    start = (f"{format_number(head)} at its first logged point" if first_alone else
             f"about {format_number(head)} over its first {k} logged points")
    end = f"{format_number(tail)} at its last" if k == 1 else f"about {format_number(tail)} over its last {k}"
    return f"{start} and {end}"


def _held_out_flat(loss, eval_loss, head: float, tail: float, train_fell: bool) -> Finding:
    """The warning for a log whose held-out loss never improved (`held_out_never_fell`), whatever its training loss
    did: "fitted its training data" only where that loss fell clearly (`train_fell`; MuQlanyu's 1.275 -> 1.255 over
    three epochs, inside its noise, fitted nothing)."""
    first, lowest, last = (float(v) for v in (eval_loss.iloc[0], eval_loss.min(), eval_loss.iloc[-1]))
    message = (f"the eval loss never improved on its first evaluation: {format_number(first)} at step "
               f"{int(eval_loss.index[0])}, {format_number(lowest)} at its lowest, {format_number(last)} at the last "
               f"of {len(eval_loss)} evaluations (never 1% under the first), while the training loss went from about "
               f"{format_number(head)} to {format_number(tail)} ({len(loss)} points, steps {int(loss.index[0])} to "
               f"{int(loss.index[-1])}): {_training_loss_said(train_fell)} Check the samples it generates, the "
               "learning rate and how long it trained, and whether the held-out set is like the training data.")
    return Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                   metric=EVAL_LOSS, evidence={"head": head, "tail": tail, "n_points": int(len(loss)),
                                               "eval_first": first, "eval_lowest": lowest,
                                               "n_evaluations": int(len(eval_loss))})


def _training_loss_said(train_fell: bool) -> str:
    """What the training loss beside a held-out loss that never improved shows."""
    if train_fell:
        return "the model fitted its training data, but nothing shows it learned what carries to data it has not seen."
    return "the training loss did not clearly fall either: nothing shows the model learned anything."


def _eval_said(eval_loss) -> str:
    """What the eval loss showed, for a message that says the training loss did not fall: not logged, not lower at
    its last evaluation, or lower by no clear fall (never 'no eval loss fell' of one that did)."""
    if eval_loss.empty:
        return "and no eval loss was logged"
    first, last = float(eval_loss.iloc[0]), float(eval_loss.iloc[-1])
    moved = f"{format_number(first)} -> {format_number(last)} over {len(eval_loss)} evaluations"
    if len(eval_loss) < 2 or last >= first:
        return f"and the eval loss did not fall either ({moved})"
    return f"and the eval loss fell too little or too unevenly to show it ({moved})"


def _dip_said(loss) -> str:
    """`; it went down to X at step S and came back up` where the log dipped and came most of the way back
    (`came_back_up`): a line fitted over the dip falls, the run did not; else ""."""
    series = pair_means_if_alternating(without_blips(loss))  # (the series `fell_clearly` reads)
    values = series.to_numpy(dtype="float64")
    if not came_back_up(values, point_noise(values)):
        return ""
    low = series.idxmin()
    return (f"; it went down to {format_number(float(series[low]))} at step {int(low)} and came back up, a swing of "
            "the loss, not a descent")


def detect_ended_near_the_guess(metrics: Metrics, thresholds: Thresholds, vocab_size, num_train_epochs,
                                max_steps) -> list[Finding]:
    """One `no_learning_evidence` warning for a language model that started at about the uniform guess over its
    vocabulary (a first loss at `_FROM_THE_GUESS` x ln V or more: from random weights) and whose loss fell, but ended
    its run, `_SIZEABLE` updates or more and its planned epochs or steps done, still over `_NEAR_THE_GUESS` x ln V;
    or []. Token frequencies alone take a model to about 0.7-0.8 of ln V (a unigram model of BPE text): a fall that
    stops above that has not learned even them, however clearly it fell (a 4-wide BERT2BERT, 10.37 -> 9.42 over its
    one epoch, ln 32000 = 10.37). A log that stops before its run's end may be on its way down: judged so only past
    half its planned steps and falling too slowly to leave the guess's neighbourhood by their end
    (`_cannot_leave_the_guess`)."""
    loss = real_loss(metrics) if LOSS in metrics else _EMPTY
    if not isinstance(vocab_size, int) or vocab_size < _TOKEN_VOCABULARY or len(loss) < thresholds.learning_min_points \
            or is_preference_log(metrics) or reward_metric(metrics) is not None or is_rl_without_reward(metrics):
        return []
    level, first = math.log(vocab_size), float(loss.iloc[0])
    fell, _, tail = fell_clearly(loss, thresholds)
    if first < _FROM_THE_GUESS * level or not fell or not _NEAR_THE_GUESS * level <= tail <= level \
            or int(loss.index[-1]) < _SIZEABLE:
        return []
    planned = _planned_steps(metrics, loss, num_train_epochs, max_steps)
    done = planned is not None and int(loss.index[-1]) >= _AT_THE_END * planned
    if not done and not _cannot_leave_the_guess(loss, planned, _NEAR_THE_GUESS * level):
        return []
    how_far = "its planned length done" if done else (
        f"{100 * int(loss.index[-1]) / planned:.0f}% of its planned {planned} steps, falling too slowly to leave that "
        "level by their end")
    message = (f"the loss fell from {format_number(first)} to about {format_number(tail)} over the "
               f"{'whole ' * done}run ({len(loss)} points, steps {int(loss.index[0])} to {int(loss.index[-1])}, "
               f"{how_far}), but "
               f"ended at {100 * tail / level:.0f}% of ln {vocab_size} = {format_number(level)}, the uniform "
               "guess over the model's vocabulary: knowing only how often each token occurs takes a model to about "
               "0.7-0.8 of that guess, so the run ended without learning even that, let alone the task: no evidence of "
               "a usable model. Check the model's size (a test-size config?), the learning rate and how long it "
               "trained.")
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric=LOSS, evidence={"first": first, "tail": tail, "uniform_guess_loss": level,
                                           "vocab_size": vocab_size, "n_points": int(len(loss))})]


_TOKEN_VOCABULARY = 1000  # (a character vocabulary's guess is low enough that its frequencies sit near it)
_FROM_THE_GUESS = 0.9  # a first loss this near ln V or above it: a model that started from random weights (or as bad)
_NEAR_THE_GUESS = 0.85  # over this share of ln V at the end: above what token frequencies alone give (0.7-0.8)
_SIZEABLE = 300  # updates: random weights reach the token frequencies within a few hundred
_AT_THE_END = 0.95  # the last logged epoch (or step) at this share of the planned ones: the run's end


def _planned_steps(metrics: Metrics, loss, num_train_epochs, max_steps) -> int | None:
    """The run's planned length in steps: a positive max_steps, else num_train_epochs x the steps an epoch makes (the
    log's last step over its last epoch), else None."""
    if isinstance(max_steps, (int, float)) and max_steps > 0:
        return int(max_steps)
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else _EMPTY
    if not isinstance(num_train_epochs, (int, float)) or num_train_epochs <= 0 or not len(epochs) \
            or not float(epochs.iloc[-1]) > 0:
        return None
    return int(round(num_train_epochs * float(epochs.index[-1]) / float(epochs.iloc[-1])))


_PAST_HALF = 0.5  # a log stopped before its end is judged from this share of its planned steps on


def _cannot_leave_the_guess(loss, planned: int | None, bar: float) -> bool:
    """Whether a log stopped past `_PAST_HALF` of its planned steps, its last quarter's least-squares line carried on
    to the planned end, would still be over `bar` there: the run, finished, would
    end near the guess too (its rate decays with the learning rate, so the line is generous)."""
    last = int(loss.index[-1])
    if planned is None or last < _PAST_HALF * planned:
        return False
    quarter = loss.iloc[-max(3, len(loss) // 4):]
    steps = quarter.index.to_numpy(dtype="float64")
    if len(quarter) < 3 or np.ptp(steps) <= 0:
        return False
    slope, intercept = (float(v) for v in np.polyfit(steps, quarter.to_numpy(dtype="float64"), 1))
    return intercept + slope * last + min(slope, 0.0) * (planned - last) > bar


def _what_to_check(loss) -> str:
    """The advice of a loss that did not fall: a log that starts mid-run cannot show what came before it, so
    there the missing start is what to look for, not a fault of the training."""
    if starts_mid_run(loss):
        return (f"The log begins at step {int(loss.index[0])}, not at the run's start: whether the loss fell before "
                "that is not in it; the run's whole log (trainer_state.json, the tracker's history) would tell.")
    # every fine-tune starts from a trained model: what flattens its loss is one already trained on this data
    return ("Check the learning rate, that the loss covers the answer tokens, and whether training started from a "
            "model already trained on this data (a resumed or re-used checkpoint).")


def _no_update_between(metrics: Metrics) -> list[Finding]:
    """The warning for a log whose optimizer step never advanced (`_no_update`): the loss may drift from line to line
    (a running mean over micro-batches takes in new ones), but with no update between them that is not learning."""
    steps = _no_update(metrics)
    loss = finite(metrics[LOSS]) if LOSS in metrics else _EMPTY
    seen = (f"; the loss went {format_number(float(loss.iloc[0]))} -> {format_number(float(loss.iloc[-1]))}, which "
            "with no update between is only which micro-batches entered its mean" if len(loss) >= 2 else "")
    message = (f"the optimizer step reads {format_number(float(steps.iloc[0]))} on all {len(steps)} logged lines "
               f"(iterations {int(steps.index[0])} to {int(steps.index[-1])}): no optimizer update happened between "
               f"them (a gradient accumulation longer than the log, or no update at all){seen}: no evidence the run "
               "learned. Log over several optimizer steps, or a validation loss.")
    return [Finding("no_learning_evidence", "warning", int(steps.index[0]), message, end_step=int(steps.index[-1]),
                    metric=LOSS if len(loss) else OPTIMIZER_STEP,
                    evidence={"n_points": int(len(steps)), "optimizer_step": float(steps.iloc[0])})]


def _rl_loss_only(loss) -> list[Finding]:
    """The warning for an RL log (GRPO, PPO) that holds no reward: its loss is the policy-gradient objective, near 0
    (or under it) by construction, whose level and trend say nothing of whether the policy got better."""
    first, last = int(loss.index[0]), int(loss.index[-1])
    message = (f"an RL run whose log holds no reward: only its loss was logged ({len(loss)} points, steps {first} to "
               f"{last}, about {format_number(float(loss.median()))}), and an RL loss (GRPO's, PPO's) sits near 0 by "
               "construction, so it says nothing of whether the policy improved: no evidence the run learned. Log the "
               "reward (TRL's GRPOTrainer logs reward, reward_std and rewards/<function>/mean; its trainer_state.json "
               "keeps them where the console table shows the loss alone) and compare a few completions before and "
               "after.")
    return [Finding("no_learning_evidence", "warning", first, message, end_step=last, metric=LOSS,
                    evidence={"n_points": int(len(loss)), "reward_logged": False})]


def _reward_did_not_rise(metrics: Metrics, name: str, thresholds: Thresholds) -> list[Finding]:
    """An RL log whose reward does not end clearly above where it started (by the same measure as a loss
    falling, on the negated reward): nothing shows the policy improved."""
    if learning_shown(metrics, thresholds) is not None:  # one measure for the warning and the healthy evidence
        return []
    reward = finite(metrics[name])
    _, head, tail = fell_clearly(-reward, thresholds, REWARD_TREND_Z)
    start, end = 0.0 - head, 0.0 - tail  # (not -head: a reward at 0 would be said "-0")
    # the message compares like with like: the mean of the first quarter of the points with that of the last (the
    # measure above may set the first point alone against the last tenth's median, which on a noisy reward can read
    # as a rise where the reward fell)
    k = max(1, len(reward) // 4)
    first, last = 0.0 + float(reward.iloc[:k].mean()), 0.0 + float(reward.iloc[-k:].mean())
    # a single point at each end is said as one, not "averaged ... over the first logged point" (BuonHobo's 3 points)
    ends = (f"it averaged {format_number(first)} over the first {k} logged points and {format_number(last)} over the "
            f"last {k}" if k > 1 else
            f"it was {format_number(first)} at its first logged point and {format_number(last)} at its last")
    message = (f"the reward did not rise clearly above its own noise: {ends} ({len(reward)} points, "
               f"steps {int(reward.index[0])} to {int(reward.index[-1])}); in an RL run the reward, not the loss, "
               "shows learning, so nothing shows the policy improved. Check the learning rate, the reward functions "
               "and how many groups have any reward spread.")
    return [Finding("no_learning_evidence", "warning", int(reward.index[0]), message, end_step=int(reward.index[-1]),
                    metric=name, evidence={"head": start, "tail": end, "n_points": int(len(reward)),
                                           "first_quarter_mean": first, "last_quarter_mean": last})]


def for_a_reward_model(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A reward model's log judged on its loss: the `reward` it prints is the score it gives (a scale with no goal to
    rise to), not an RL policy's return, so findings read from it are dropped and the learning evidence is looked
    for in the loss (and the pair accuracy) instead."""
    if REWARD not in metrics:
        return findings
    kept = [f for f in findings if f.metric != REWARD]
    if any(f.kind == "no_learning_evidence" and f.metric == REWARD for f in findings):
        kept += detect_no_learning_evidence(without_the_score(metrics), thresholds)
    return kept


def without_the_score(metrics: Metrics) -> Metrics:
    """A reward model's metrics without the score it prints as `reward`."""
    return {name: series for name, series in metrics.items() if name != REWARD}


def _closing_mean_said(metrics: Metrics) -> str:
    """` (and the closing summary's mean over the run, train_loss X)` where the Trainer's end summary logged one, else
    "": a mean over the whole run says its level, not its course."""
    mean = finite(metrics[TRAIN_LOSS]) if TRAIN_LOSS in metrics else None
    if mean is None or len(mean) != 1:
        return ""
    return f" (and the closing summary's mean over the run, train_loss {format_number(float(mean.iloc[0]))})"
