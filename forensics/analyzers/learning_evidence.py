"""No "healthy" without evidence: did the loss of an SFT or pre-training log actually fall?

VERDICTS.md: healthy is not "no finding fired"; the data must show a run that learned. For an
LM loss that evidence is the loss (or the eval loss) ending clearly below where it started: the
median of the last tenth of the logged points below the median of the first tenth by at least
`learning_min_fall`; or a held-out accuracy rising by `ACCURACY_RISE` (a reward model ranking more pairs right, a
classifier). When it did not, or when only a couple of points were logged, the run gets
a `no_learning_evidence` warning that says what was seen. In an RL log (GRPO, PPO) the loss is near 0 by
construction and the reward is the evidence: it must end clearly above where it started. A pairwise
preference log (DPO and kin) learned when the pairs are told apart: its loss ends clearly under ln 2 (fallen, and
`PAIRWISE_CLEAR` under it) or its reward accuracy ends at `PAIRWISE_ACCURATE` or more (a training accuracy having
risen by `PAIRWISE_RISE` from the log's first tenth: a few pairs a batch are noisy); where the log holds a
held-out evaluation, that evaluation must show it (a training accuracy that rose while the held-out loss stayed at
ln 2 is no evidence the preference carries over), unless it is a couple of evaluations that all moved the right way.
A loss stuck at ln 2 with nothing moving is `never_learned`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from ..metric_names import OPTIMIZER_STEP
from .metrics import (EVAL_ACCURACY_KEYS, LN2, LOSS, Metrics, finite, format_number, is_preference_log, point_noise,
                      real_loss)
from .reward_decline import reward_metric

EVAL_LOSS = "eval_loss"
REWARD = "reward"  # a bare `reward`: an RL policy's return, or the score a reward model prints (`for_a_reward_model`)
# A per-step RL reward is the mean over a few sampled groups: far noisier than a loss. Its rise over the run is
# read by the least-squares trend at 2.5 standard errors (one-sided p < 0.01), not 3.
REWARD_TREND_Z = 2.5
_EMPTY = pd.Series(dtype="float64")


@dataclass(frozen=True)
class LearningEvidence:
    """What shows a run learned: `metric` went from about `start` (its first logged points) to about `end`
    (its last), over `n_points` points from `first_step` to `last_step`. For a loss it fell; for a reward
    it rose."""

    metric: str
    start: float
    end: float
    n_points: int
    first_step: int
    last_step: int
    said: str = ""  # the evidence in words, where it is no start and end of one logged series

    def to_dict(self) -> dict:
        return asdict(self)


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
        held_out, train = _pairs_told_apart(metrics, thresholds)
        return held_out if _held_out_must_show(metrics, thresholds) else train
    reward_name = reward_metric(metrics)
    if reward_name is not None:
        reward = finite(metrics[reward_name])
        if len(reward) < thresholds.learning_min_points:
            return None
        rose, head, tail = _fell(-reward, thresholds, REWARD_TREND_Z)
        return _evidence(reward_name, reward, -head, -tail) if rose else None
    if is_rl_without_reward(metrics):
        return None  # its loss (near 0 by construction) shows nothing learned
    for name in (LOSS, EVAL_LOSS):
        series = real_loss(metrics) if name == LOSS and LOSS in metrics else finite(metrics.get(name, _EMPTY))
        if len(series) >= max(2, thresholds.learning_min_points if name == LOSS else 2):
            fell, head, tail = _fell(series, thresholds)
            if fell:
                return _evidence(name, series, head, tail)
    loss = real_loss(metrics) if LOSS in metrics else _EMPTY
    if _two_windows_fell(loss):
        return _evidence(LOSS, loss, float(loss.iloc[0]), float(loss.iloc[-1]))
    return _accuracy_rose(metrics) or _token_accuracy_rose(metrics, thresholds) or _fell_before_the_log(metrics, loss) \
        or _fell_in_the_first_window(metrics, loss, thresholds)


_LATE_START = 3  # logging intervals before the first logged loss: the log is a tail of the run
_WHOLE_RUN_ABOVE = 0.05  # the run's own mean loss this share above the logged tail's: the unlogged start was higher


def _fell_before_the_log(metrics: Metrics, loss) -> LearningEvidence | None:
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


# The first window's mean this many noise units above the level of every later window: on flat logs of 20-40 Gaussian
# windows the first stands 2.5 units up by chance in 1.2-1.9% of runs (the noise and level are estimates, not the
# 1 in 160 of a known sigma), 3 units in 0.4-0.9%.
_FIRST_WINDOW_Z = 3.0
_FIRST_WINDOW_MIN_POINTS = 20  # ... in a log of this many windows or more, so that the later level is well known ...
_FIRST_WINDOW_FALL = 0.1  # ... and this share under the first: a few percent is a hard first batch, not learning


def _fell_in_the_first_window(metrics: Metrics, loss, thresholds: Thresholds) -> LearningEvidence | None:
    """A log of window means (`_window_means`) that starts at the run's start (not `starts_mid_run`) and whose first
    window stands `_FIRST_WINDOW_Z` noise units (one point's) and `_FIRST_WINDOW_FALL` above the median of all the
    windows after it: the loss came down within the first window. One pre-chosen point against a level known from
    `_FIRST_WINDOW_MIN_POINTS` windows or more is a one-point test; where a token accuracy is logged, its first window
    must sit under the later level too, by its own noise. A log that begins mid-run has no run start in its first
    window: a resume's first window up is the optimizer settling, not the loss coming down. Else None."""
    # (a loss swinging by turns is read in pairs, as `_fell` reads it: the swing is no noise to measure the first by)
    values = _pair_means_if_alternating(without_blips(loss)).to_numpy(dtype="float64")
    if len(values) < _FIRST_WINDOW_MIN_POINTS or not _window_means(loss) or starts_mid_run(loss):
        return None
    first, later = float(values[0]), float(np.median(values[1:]))
    if not _stands_above(first, later, values, thresholds) or not _accuracy_agrees(metrics):
        return None
    return _evidence(LOSS, loss, first, later)


def _stands_above(first: float, later: float, values: np.ndarray, thresholds: Thresholds) -> bool:
    noise = point_noise(values)
    fall = max(_FIRST_WINDOW_FALL, thresholds.learning_min_fall)
    return noise > 0 and first - later >= _FIRST_WINDOW_Z * noise and later < (1 - fall) * first


def _accuracy_agrees(metrics: Metrics) -> bool:
    """No token accuracy logged, or its first window under the median of the later ones, by one noise unit or more
    (a log of two accuracies, or a smooth one, has no noise to measure by: there it must be under at all)."""
    name = next((key for key in TOKEN_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]).to_numpy(dtype="float64") if name else np.empty(0)
    if len(accuracy) < 2:
        return True
    rise = float(np.median(accuracy[1:])) - float(accuracy[0])
    return rise > 0 and rise >= point_noise(accuracy)


def starts_mid_run(loss) -> bool:
    """Whether the log's first loss comes `_LATE_START` logging intervals or more after step 0: a tail or an excerpt
    of a run, whose start is not in the file."""
    if len(loss) < 2:
        return False
    gap = float(np.median(np.diff(loss.index.to_numpy(dtype="float64"))))
    return gap > 0 and float(loss.index[0]) >= _LATE_START * gap


_WINDOW_STEPS = 10  # two logged losses this many steps apart or more are each a mean over that many steps ...
_WINDOW_FALL = 0.25  # ... and a fall of this share from one to the other is no noise


def _two_windows_fell(loss) -> bool:
    """Two training losses, each the mean of a logging window of `_WINDOW_STEPS` steps or more (the HF Trainer logs
    the mean since the last log), the second `_WINDOW_FALL` or more under the first (mkcomer237: 0.352 at step 50,
    0.198 at 100)."""
    if len(loss) != 2:
        return False
    first, second = float(loss.iloc[0]), float(loss.iloc[1])
    return _window_means(loss) and first > 0 and second <= (1 - _WINDOW_FALL) * first


def _window_means(loss) -> bool:
    """Whether each logged loss (a series, or its steps) is the mean of a logging window of `_WINDOW_STEPS` steps or
    more."""
    steps = np.asarray(getattr(loss, "index", loss), dtype="int64")
    return len(steps) > 0 and int(steps[0]) >= _WINDOW_STEPS and bool(np.all(np.diff(steps) >= _WINDOW_STEPS))


def _short_pairwise_log_told_apart(metrics: Metrics, loss, thresholds: Thresholds) -> bool:
    """A pairwise log of a couple of window means, whose pairs are told apart (klix18's TRL DPO: 0.678 at step 10,
    0.652 at step 20). A DPO loss starts at ln 2 exactly, the policy being its reference; a mean over ten steps or
    more clearly under it is the policy preferring the chosen answers, not the noise of one batch."""
    return is_pairwise_log(metrics) and _window_means(loss) and learning_shown(metrics, thresholds) is not None


ACCURACY_RISE = 0.1  # a held-out accuracy this far above where it was first evaluated: the model learned


def _accuracy_rose(metrics: Metrics) -> LearningEvidence | None:
    """A held-out accuracy that rose clearly (by `ACCURACY_RISE`) from its first evaluation to its last (a reward
    model's share of pairs ranked right, a classifier's), or None."""
    name = next((key for key in EVAL_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]) if name else _EMPTY
    if len(accuracy) < 2 or float(accuracy.iloc[-1]) < float(accuracy.iloc[0]) + ACCURACY_RISE:
        return None
    return _evidence(name, accuracy, float(accuracy.iloc[0]), float(accuracy.iloc[-1]))


TOKEN_ACCURACY_KEYS = ("mean_token_accuracy", "token_acc")  # TRL's SFT, ms-swift: over the training batches


def _token_accuracy_rose(metrics: Metrics, thresholds: Thresholds) -> LearningEvidence | None:
    """The training token accuracy risen clearly, by the measure a loss's fall is read by (`_fell`, on the accuracy
    turned over), or None: the share of target tokens predicted right going up is the model learning them, whatever
    the loss's noise hides. One that moved no more than its own noise (a first window a little under the rest) is
    no evidence."""
    name = next((key for key in TOKEN_ACCURACY_KEYS if key in metrics), None)
    accuracy = finite(metrics[name]) if name else _EMPTY
    if len(accuracy) < thresholds.learning_min_points:
        return None
    rose, head, tail = _fell(-accuracy, thresholds)
    return _evidence(name, accuracy, -head, -tail) if rose else None


def _evidence(name: str, series, start: float, end: float) -> LearningEvidence:
    return LearningEvidence(name, float(start), float(end), int(len(series)), int(series.index[0]),
                            int(series.index[-1]))


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
        return _eval_only(metrics, thresholds)
    loss = real_loss(metrics)
    if is_pairwise_log(metrics) and len(loss) >= thresholds.learning_min_points:
        return _pairs_not_told_apart(metrics, loss, thresholds)
    if is_rl_without_reward(metrics) and len(loss) >= thresholds.learning_min_points:
        return _rl_loss_only(loss)  # an RL log without a reward it names: its loss is no measure of learning
    if is_preference_log(metrics) and len(loss) >= thresholds.learning_min_points:
        return []  # a pairwise log whose pair metrics are the evaluation's alone: its loss is judged there
    if len(loss) < thresholds.learning_min_points:
        evals = finite(metrics.get(EVAL_LOSS, loss.iloc[:0]))
        if len(loss) == 0 or len(evals) >= thresholds.learning_min_points and _fell(evals, thresholds)[0] \
                or _accuracy_rose(metrics) is not None or _two_windows_fell(loss) \
                or _short_pairwise_log_told_apart(metrics, loss, thresholds):
            return []  # (a model card's results table: a training loss at each evaluation, the eval loss falling)
        memorized = _eval_only_memorized(metrics, evals, thresholds) if len(evals) else []
        if memorized:  # (a tracker's copy of the closing mean read as the one loss point)
            return memorized
        message = (f"only {len(loss)} finite loss {'point was' if len(loss) == 1 else 'points were'} logged: "
                   "too few to tell whether the run learned (log more often, e.g. logging_steps=10).")
        return [Finding("no_learning_evidence", "warning", int(loss.index[-1]), message, metric=LOSS,
                        evidence={"n_points": int(len(loss))})]
    if 0 < float(loss.median()) <= thresholds.memorization_level:
        return []  # a language model's loss this low has learned its data (memorization judges whether too well)
    fell, head, tail = _fell(loss, thresholds)
    if fell:
        return []
    eval_loss = finite(metrics.get(EVAL_LOSS, loss.iloc[:0]))
    if len(eval_loss) >= 2 and _fell(eval_loss, thresholds)[0] or _accuracy_rose(metrics) is not None \
            or _token_accuracy_rose(metrics, thresholds) is not None \
            or _fell_before_the_log(metrics, loss) is not None \
            or _fell_in_the_first_window(metrics, loss, thresholds) is not None:
        return []
    moved = tail < head - thresholds.learning_min_fall * abs(head)
    noise = point_noise(without_blips(loss).to_numpy(dtype="float64"))
    said = (f"the loss fell no more than its own step-to-step noise explains (about {format_number(noise)} a point): "
            if moved else "the loss did not fall: ")
    message = (f"{said}about {format_number(head)} over the first logged points and {format_number(tail)} over the "
               f"last ({len(loss)} points, steps {int(loss.index[0])} to {int(loss.index[-1])}), and no eval loss "
               f"fell either: no evidence the run learned. {_what_to_check(loss)}")
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric=LOSS, evidence={"head": head, "tail": tail, "n_points": int(len(loss))})]


def _what_to_check(loss) -> str:
    """The advice of a loss that did not fall: a log that starts mid-run cannot show what came before it, so
    there the missing start is what to look for, not a fault of the training."""
    if starts_mid_run(loss):
        return (f"The log begins at step {int(loss.index[0])}, not at the run's start: whether the loss fell before "
                "that is not in it; the run's whole log (trainer_state.json, the tracker's history) would tell.")
    return ("Check the learning rate, that the loss covers the answer tokens, and whether training started from an "
            "already trained model.")


PAIRWISE_CLEAR = 0.03  # a pairwise loss this far under ln 2: the pairs are told apart (a margin of about 0.06)
PAIRWISE_ACCURATE = 0.6  # a reward accuracy this high (chance is 0.5) at the end of the log ...
PAIRWISE_RISE = 0.1  # ... and, for the training pairs, this much above the log's first tenth
_PAIRWISE_KEYS = ("rewards/margins", "rewards/accuracies", "rewards/chosen", "rewards/rejected", "logps/rejected",
                  "logps/chosen")
_EVAL_PAIRWISE = ("eval_rewards/accuracies", "eval_rewards/margins")


def is_pairwise_log(metrics: Metrics) -> bool:
    """A pairwise preference log (TRL's DPO / ORPO / KTO / CPO names, LLaMA-Factory's rewards/accuracies)."""
    return any(k in metrics for k in _PAIRWISE_KEYS)


def is_rl_without_reward(metrics: Metrics) -> bool:
    """An RL log (GRPO, PPO: its names, or a configuration that says so, `RLMetrics`) that holds no reward it names:
    not a pairwise preference log, whose pair metrics may be logged at evaluation alone (eval_rewards/accuracies)."""
    return is_preference_log(metrics) and reward_metric(metrics) is None and not any(
        name.removeprefix("eval_") in _PAIRWISE_KEYS for name in metrics)


# TRL's ORPO (and CPO / SimPO: nll_loss); LLaMA-Factory's ORPO / SimPO (sft_loss, odds_ratio_loss)
_REFERENCE_FREE_KEYS = ("log_odds_ratio", "nll_loss", "odds_ratio_loss", "sft_loss")


def reference_free(metrics: Metrics) -> bool:
    """A pairwise objective with no reference model (ORPO, CPO, SimPO): its pair accuracy is the policy's own from
    the first step, not 0 as a reference-based margin's is."""
    return any(k in metrics for k in _REFERENCE_FREE_KEYS)


def _has_held_out_pairs(metrics: Metrics) -> bool:
    return any(len(finite(metrics[k])) for k in (EVAL_LOSS,) + _EVAL_PAIRWISE if k in metrics)


def _held_out_must_show(metrics: Metrics, thresholds: Thresholds) -> bool:
    """Whether the learning of a pairwise log whose training pairs are told apart must also show on its held-out
    pairs: where it holds an evaluation, unless that evaluation is a couple of points that all moved the right way and
    ended leaning to the chosen answers (`_few_evals_improving`). Two evaluations that both improve are too few to
    show the preference carries over, and no sign that it does not."""
    return _has_held_out_pairs(metrics) and not _few_evals_improving(metrics, thresholds)


_HELD_OUT_LEAN = PAIRWISE_CLEAR / 3  # a last held-out loss this far under ln 2 (a mean margin of about 0.02) ...
_CHANCE = 0.5  # ... and a last held-out reward accuracy, where logged, above a coin's


def _few_evals_improving(metrics: Metrics, thresholds: Thresholds) -> bool:
    """Whether the log's held-out pairs were scored a couple of times (fewer than `learning_min_points`, every one
    finite), the loss lower at each one and its reward accuracy and margin no lower, to end `_HELD_OUT_LEAN` under
    ln 2 with an accuracy above `_CHANCE` (AnnieL66's DPO at LR 2e-5: eval loss 0.6861 -> 0.6786, accuracy 0.548 ->
    0.566 over its two epochs). A held-out loss that moves in its fourth decimal at ln 2, its accuracy at chance, is
    the held-out pairs not told apart, however few the evaluations."""
    evals = metrics[EVAL_LOSS].to_numpy(dtype="float64") if EVAL_LOSS in metrics else np.empty(0)
    if not 2 <= len(evals) < thresholds.learning_min_points or not np.all(np.isfinite(evals)) \
            or not bool(np.all(np.diff(evals) < 0)) or evals[-1] > LN2 - _HELD_OUT_LEAN:
        return False
    held_out = {k: finite(metrics[k]).to_numpy() for k in _EVAL_PAIRWISE if k in metrics}
    accuracy = held_out.get("eval_rewards/accuracies", np.empty(0))
    return not any(bool(np.any(np.diff(v) < 0)) for v in held_out.values()) \
        and (len(accuracy) == 0 or float(accuracy[-1]) > _CHANCE)


def _pairs_told_apart(metrics: Metrics, thresholds: Thresholds) -> tuple[LearningEvidence | None,
                                                                          LearningEvidence | None]:
    """(held-out evidence, training evidence) that the pairs are told apart, each None where it does not show."""
    return (_told_apart(metrics, EVAL_LOSS, "eval_rewards/accuracies", thresholds),
            _told_apart(metrics, LOSS, "rewards/accuracies", thresholds))


def _told_apart(metrics: Metrics, loss_name: str, accuracy_name: str,
                thresholds: Thresholds) -> LearningEvidence | None:
    if loss_name == LOSS and _odds_ratio_at_chance(metrics):
        return None  # ORPO's pair term never left ln 2: its accuracy is the sign of tiny margins, its fall the NLL's
    accuracy = finite(metrics[accuracy_name]) if accuracy_name in metrics else _EMPTY
    if len(accuracy):
        k = max(1, len(accuracy) // 10)
        start, end = float(accuracy.iloc[:k].mean()), float(accuracy.iloc[-k:].mean())
        # a held-out evaluation comes after training steps (a reference model ranks no pair right: every margin 0);
        # a training accuracy, the mean over a few pairs a batch, must also have risen from where the log began,
        # and so must a reference-free objective's held-out one (ORPO's odds ratio ranks pairs from the start)
        risen = loss_name == EVAL_LOSS and not reference_free(metrics) or end >= start + PAIRWISE_RISE
        if end >= PAIRWISE_ACCURATE and risen:
            return _evidence(accuracy_name, accuracy, float(accuracy.iloc[0]), end)
    loss = real_loss(metrics) if loss_name == LOSS else finite(metrics.get(loss_name, _EMPTY))
    if len(loss) >= 2:
        fell, head, tail = _fell(loss, thresholds)
        if tail <= LN2 - PAIRWISE_CLEAR and (fell or len(loss) < thresholds.learning_min_points or head < LN2):
            return _evidence(loss_name, loss, head, tail)
        # ORPO / CPO add a language-model loss: its fall is learning too. A DPO loss may start above ln 2 as well
        # (the reference is not where the policy starts: giakhanhhii's SFT adapter), and its fall is no learning while
        # the pairs are still ranked the wrong way round
        if fell and head > _MIXED_START and (reference_free(metrics) or not _ranked_wrong(accuracy)):
            return _evidence(loss_name, loss, head, tail)
    return None


ODDS_RATIO = "log_odds_ratio"


def _odds_ratio_at_chance(metrics: Metrics) -> bool:
    """ORPO's `log_odds_ratio` (log sigmoid of the chosen answer's log-odds over the rejected one's) at -ln 2 over the
    log's first and last tenths, within `PAIRWISE_CLEAR` of it: the policy never came to prefer either answer,
    whatever sign its tiny margins have (chtmp223's Mistral-7B ORPO at LR 5e-7: -0.6935 -> -0.6912 over 2,307 steps,
    accuracies 0.8-1.0 on margins of 1e-4, while only the NLL part fell). One that moved (from the wrong way round
    towards chance, or past it) is judged as before, its language-model part's fall counting."""
    odds = finite(metrics[ODDS_RATIO]) if ODDS_RATIO in metrics else _EMPTY
    if len(odds) < 2:
        return False
    k = max(1, len(odds) // 10)
    return all(abs(float(np.median(part)) + LN2) <= PAIRWISE_CLEAR for part in (odds.iloc[:k], odds.iloc[-k:]))


def _ranked_wrong(accuracy) -> bool:
    """A reward accuracy that ends under chance, more pairs ranked the wrong way round than the right one, without
    having risen by `PAIRWISE_RISE` (from 0.15 to 0.45 the policy is learning the pairs, though from far behind)."""
    k = max(1, len(accuracy) // 10)
    if not len(accuracy):
        return False
    # (a reference-based pair accuracy is 0 at its first step, every margin 0: no level to have risen from)
    head = accuracy.iloc[1:k + 1] if len(accuracy) > k + 1 else accuracy.iloc[:k]
    start, end = float(head.mean()), float(accuracy.iloc[-k:].mean())
    return end < 0.5 and end < start + PAIRWISE_RISE


_MIXED_START = 1.0  # a pairwise loss starts at ln 2; one that starts above this carries an LM term (ORPO's NLL)


def _held_out_said(metrics: Metrics) -> str:
    """What the held-out pairs show: their loss's last values (said to sit at ln 2 only where they do) and their
    reward accuracy where logged (prchigoyal01's DPO: eval loss 0.49-0.55, under ln 2, accuracy 0.50-0.57)."""
    evals = finite(metrics[EVAL_LOSS]) if EVAL_LOSS in metrics else _EMPTY
    accuracy = finite(metrics["eval_rewards/accuracies"]) if "eval_rewards/accuracies" in metrics else _EMPTY
    held = (f"the held-out reward accuracy stayed near chance ({', '.join(format_number(v) for v in accuracy.iloc[-4:])})"
            if len(accuracy) else "")
    if not len(evals):
        return held or "the held-out reward accuracy stayed near chance"
    shown = ", ".join(format_number(v) for v in evals.iloc[-4:])
    at_ln2 = bool(np.all(np.abs(evals.iloc[-4:].to_numpy() - LN2) <= PAIRWISE_CLEAR))
    loss_said = f"the held-out loss stayed at about ln 2 ({shown})" if at_ln2 else f"the held-out loss ended at {shown}"
    return f"{loss_said} and {held}" if held else loss_said


def _pairs_not_told_apart(metrics: Metrics, loss, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_evidence` warning for a pairwise log whose pairs are not told apart (module docstring)."""
    held_out, train = _pairs_told_apart(metrics, thresholds)
    evaluated = _has_held_out_pairs(metrics)
    if held_out is not None or (train is not None and not _held_out_must_show(metrics, thresholds)):
        return []
    k = max(1, len(loss) // 10)
    seen = (f"the preference loss went from about {format_number(float(np.median(loss.iloc[:k])))} to "
            f"{format_number(float(np.median(loss.iloc[-k:])))} (ln 2 = 0.6931 is a coin flip between the answers)")
    if train is not None:
        where = _held_out_said(metrics)
        message = (f"the training pairs are told apart ({train.metric} {format_number(train.start)} -> "
                   f"{format_number(train.end)}) but {where}: no evidence the preference carries over to held-out "
                   "pairs. Check that the evaluation pairs come from the same distribution, and the learning rate "
                   "and beta (too little movement off the reference model).")
    else:
        accuracy = finite(metrics["rewards/accuracies"]) if "rewards/accuracies" in metrics else _EMPTY
        k = max(1, len(accuracy) // 10)
        also = (f", and the reward accuracy from about {format_number(float(accuracy.iloc[:k].mean()))} to "
                f"{format_number(float(accuracy.iloc[-k:].mean()))} (chance is 0.5)" if len(accuracy) else "")
        message = (f"{seen}{also}: no evidence the policy learned to prefer the chosen answers. Check the learning "
                   "rate and beta, and that the chosen and rejected answers differ.")
        if _odds_ratio_at_chance(metrics):
            odds = finite(metrics[ODDS_RATIO])
            message = (f"the odds-ratio term stayed at -ln 2 = -0.6931, a coin flip between the answers "
                       f"({ODDS_RATIO} {format_number(float(odds.iloc[0]))} -> {format_number(float(odds.iloc[-1]))} "
                       f"over {len(odds)} logged steps): the policy learned to prefer neither answer; the loss fell "
                       "with its language-model (NLL) part alone, and a reward accuracy over margins this small is "
                       "their sign, not a preference. Check the learning rate and beta, and that the chosen and "
                       "rejected answers differ.")
    return [Finding("no_learning_evidence", "warning", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                    metric=LOSS, evidence={"n_points": int(len(loss)), "pairwise": True,
                                           "trained_pairs_told_apart": train is not None, "evaluated": evaluated})]


def _fell(series, thresholds: Thresholds, trend_z: float = 3.0) -> tuple[bool, float, float]:
    """Whether the last tenth ends clearly below where the log started (its first tenth, or its very first
    point, for a loss learned within the first tenth, unless that point is a start-up transient alone,
    `_first_point_alone`): by `learning_min_fall` of it, and by more than the loss's own point-to-point noise
    could explain (3 standard errors; `trend_z` of them for the trend)."""
    series = _pair_means_if_alternating(without_blips(series))
    values = series.to_numpy(dtype="float64")
    k = max(1, len(values) // 10)
    first, head_median, tail = float(values[0]), float(np.median(values[:k])), float(np.median(values[-k:]))
    sigma = point_noise(values) or _sparse_noise(values)
    # The median of k points varies by about 1.25 sigma / sqrt(k); one point by sigma.
    by_median = _clear_fall(head_median, tail, 3 * 1.2533 * sigma * np.sqrt(2 / k), thresholds)
    one_point = 3 * sigma * np.sqrt(1 + 1.5708 / k)
    # (a log that starts mid-run - a resume, an excerpt - has a first point that is no start: one high point there is
    # the resume's first batch, not a loss the run brought down)
    by_first = _clear_fall(first, tail, one_point, thresholds) and not starts_mid_run(series)
    if by_first and _first_point_alone(values, series.index, k, tail, one_point, thresholds):
        by_first, first = False, head_median
    # a loss that dropped to a new level early and stayed there, noisily: the level of everything after the first
    # tenth (its median, over many more points than the last tenth) against the first tenth's, where it ends too
    rest = float(np.median(values[k:])) if len(values) > k else tail
    by_level = _clear_fall(head_median, rest, 3 * 1.2533 * sigma * np.sqrt(1 / k + 1 / max(1, len(values) - k)),
                           thresholds) and tail < head_median - thresholds.learning_min_fall * abs(head_median)
    # (a trend counts where the log also ends below where it began: a hump in the middle tilts a line over a flat log)
    trend = _falling_trend(values, sigma, thresholds, trend_z) \
        and tail < head_median - _TREND_ENDS_LOWER * abs(head_median)
    fell = by_median or by_first or by_level or trend or _down_at_every_point(values)
    return fell, max(head_median, first), tail


_STEADY_POINTS = 4  # a short log lower at every point than at the one before, over this many points or more ...
_STEADY_FALL = 0.1  # ... and this share under its first in all


def _down_at_every_point(values: np.ndarray) -> bool:
    """A short log that is lower at each point than at the one before, by `_STEADY_FALL` in all (HannahMariamj's
    LoRA: eval loss 4.970, 4.030, 3.593, 3.520). Its own point-to-point noise cannot be measured apart from the
    fall (the steps differ because the fall slows), and noise alone orders n points so once in n! (1 in 24 for four)."""
    steps = np.diff(values)
    return len(values) >= _STEADY_POINTS and bool(np.all(steps < 0)) and values[0] > 0 \
        and float(values[-1]) <= (1 - _STEADY_FALL) * float(values[0])


_TREND_ENDS_LOWER = 0.01  # the last tenth's median this share under the first tenth's, for a falling line to count


_ALTERNATING = 0.9  # the share of consecutive steps that change direction in a loss that swings up and down by turns
_ALTERNATION_POINTS = 10


def _pair_means_if_alternating(series: pd.Series) -> pd.Series:
    """The means of a loss's pairs of points (at each pair's second step) where it swings up and down by turns (at
    least `_ALTERNATING` of its steps change direction over `_ALTERNATION_POINTS` points or more, as batches grouped by
    length make it: long and short answers logged in turn), else the series itself. The swing is the batches' make-up,
    not the level the run is at nor its noise (AhmedNabil03's Llama-2 LoRA: 1.27 and 0.85 by turns after 2.43 at its
    first point; its pairs 1.78, 1.11, 1.09 ... 1.06)."""
    values = series.to_numpy(dtype="float64")
    steps = np.diff(values)
    if len(values) < _ALTERNATION_POINTS or float(np.mean(steps[1:] * steps[:-1] < 0)) < _ALTERNATING:
        return series
    n = len(values) // 2 * 2
    return pd.Series(values[:n].reshape(-1, 2).mean(axis=1), index=series.index[1:n:2])


_BLIP_Z = 5.0  # a point this many noise units off its two neighbours' midpoint, both ways back, is a one-step blip ...
_MAX_BLIPS = 2  # ... and at most this many are set aside


def without_blips(series: pd.Series) -> pd.Series:
    """The series without its one-step blips: an inner point off the midpoint of its two neighbours, the loss going
    there and straight back, by `_BLIP_Z` times the point-to-point noise of the series without it (at most
    `_MAX_BLIPS`, the largest first). One such point adds two large steps to a short log and can inflate its noise
    estimate several times over, so a fall the other points show clearly reads as noise; the blip is the loss_spike
    detector's to judge, not the level's."""
    for _ in range(_MAX_BLIPS):
        values = series.to_numpy(dtype="float64")
        if len(values) < 5:
            break
        off = values[1:-1] - (values[:-2] + values[2:]) / 2
        back = (values[1:-1] - values[:-2]) * (values[2:] - values[1:-1]) < 0
        if not back.any():
            break
        i = int(np.argmax(np.where(back, np.abs(off), -1.0)))
        rest = np.delete(values, i + 1)
        sigma = point_noise(rest)
        if sigma <= 0 or abs(float(off[i])) <= _BLIP_Z * np.sqrt(1.5) * sigma:
            break
        series = series.drop(series.index[i + 1])
    return series


def _first_point_alone(values: np.ndarray, steps, k: int, tail: float, noise: float, thresholds: Thresholds) -> bool:
    """The first point stands alone above the level the log holds from its second point on, and the log after it
    does not fall: a start-up transient (the first batch, a first step on the weights as loaded, often with a
    grad_norm many times the rest), not a loss the run brought down. Its fall to the end is learning only where the
    second point still stands clearly above the end, or the points after the first fall too (by `learning_min_fall`
    from the median of the first tenth without the first point to the last tenth's), or each point is the mean of a
    logging window (`_window_means`): a first window's mean above the rest is the loss falling within it."""
    if len(values) < 3 or _clear_fall(float(values[1]), tail, noise, thresholds) or _window_means(steps):
        return False
    after = float(np.median(values[1:k + 1]))
    return not tail < after - thresholds.learning_min_fall * abs(after)


def _sparse_noise(values: np.ndarray) -> float:
    """The point-to-point spread of a series that sits at one value with rare departures (a reward of 0 with an odd
    0.5, Hosh1mi's GRPO): its robust spread is 0, which would make any least-squares tilt from where the departures
    happen to fall a 'clear' trend. The standard deviation of its steps, per point."""
    steps = np.diff(values)
    return float(np.std(steps) / np.sqrt(2)) if len(steps) >= _SPARSE_MIN_POINTS else 0.0


_SPARSE_MIN_POINTS = 10  # (on fewer, one drop is all the steps there are: Shaharak88's 0.4666 then three exact 0s)


def _falling_trend(values: np.ndarray, sigma: float, thresholds: Thresholds, z: float = 3.0) -> bool:
    """A short or noisy log whose least-squares line falls, over the whole log, by more than
    `learning_min_fall` of where it starts and by `z` standard errors of that fall."""
    n = len(values)
    if n < 3:
        return False
    x = np.arange(n, dtype="float64")
    slope, intercept = np.polyfit(x, values, 1)
    fall = -slope * (n - 1)
    se = sigma * (n - 1) / np.sqrt(n * (n * n - 1) / 12)
    return fall > thresholds.learning_min_fall * abs(intercept) and fall > z * se


def _clear_fall(head: float, tail: float, noise: float, thresholds: Thresholds) -> bool:
    return tail < head - thresholds.learning_min_fall * abs(head) and head - tail > noise


def _no_update_between(metrics: Metrics) -> list[Finding]:
    """The warning for a log whose optimizer step never advanced (`_no_update`): the loss may drift from line to line
    (a running mean over micro-batches takes in new ones), but with no update between them that is not learning."""
    steps = _no_update(metrics)
    loss = finite(metrics[LOSS]) if LOSS in metrics else _EMPTY
    seen = (f"; the loss went {format_number(float(loss.iloc[0]))} -> {format_number(float(loss.iloc[-1]))}, which with "
            "no update between is only which micro-batches entered its mean" if len(loss) >= 2 else "")
    message = (f"the optimizer step reads {format_number(float(steps.iloc[0]))} on all {len(steps)} logged lines "
               f"(iterations {int(steps.index[0])} to {int(steps.index[-1])}): no optimizer update happened between "
               f"them (a gradient accumulation longer than the log, or no update at all){seen}: no evidence the run "
               "learned. Log over several optimizer steps, or a validation loss.")
    return [Finding("no_learning_evidence", "warning", int(steps.index[0]), message, end_step=int(steps.index[-1]),
                    metric=LOSS if len(loss) else OPTIMIZER_STEP,
                    evidence={"n_points": int(len(steps)), "optimizer_step": float(steps.iloc[0])})]


def _eval_only(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A log with eval losses but no training loss (logging_steps longer than the run): the eval loss
    is the only evidence, and a couple of points are too few."""
    evals = finite(metrics.get(EVAL_LOSS)) if EVAL_LOSS in metrics else None
    if evals is None or len(evals) == 0:
        return [] if is_preference_log(metrics) else _no_loss_at_all(metrics)
    if len(evals) >= thresholds.learning_min_points and _fell(evals, thresholds)[0]:
        return []
    memorized = _eval_only_memorized(metrics, evals, thresholds)
    if memorized:
        return memorized
    seen = ", ".join(format_number(v) for v in evals.iloc[:4])
    message = (f"no training loss was logged (logging_steps longer than the run?) and the eval loss alone "
               f"({len(evals)} {'point' if len(evals) == 1 else 'points'}: {seen}) is too little to tell whether "
               "the run learned: log the training loss (a smaller logging_steps).")
    return [Finding("no_learning_evidence", "warning", int(evals.index[0]), message, end_step=int(evals.index[-1]),
                    metric=EVAL_LOSS, evidence={"n_points": int(len(evals)), "training_loss_logged": False})]


_MEAN_ABOVE = 2.0  # the run's mean training loss this many times over its last eval loss: the loss fell over the run


def _eval_only_memorized(metrics: Metrics, evals: pd.Series, thresholds: Thresholds) -> list[Finding]:
    """A log with no training loss curve (none, or a point or two) whose end summary says the run went `memorization_epochs` epochs or more
    over its data, its last eval loss under `memorization_level_many_epochs` and the run's mean training loss (the
    Trainer's `train_loss`) `_MEAN_ABOVE` x or more over it: the loss fell over the run (it learned), down to where
    the model reproduces the texts it is evaluated on nearly token for token after seeing its data that many times
    (run_clm on three blocks for 100 epochs: train_loss 0.78, eval loss 0.083, eval accuracy 0.986). A
    `memorization` warning at the evaluation, not a lack of evidence: a summary says what the curve would have."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else _EMPTY
    mean = finite(metrics["train_loss"]) if "train_loss" in metrics else _EMPTY
    if is_preference_log(metrics) or not len(epochs) or float(epochs.max()) < thresholds.memorization_epochs \
            or not len(mean):
        return []
    last, run_mean = float(evals.iloc[-1]), float(mean.iloc[-1])
    if not 0 < last <= thresholds.memorization_level_many_epochs or run_mean < _MEAN_ABOVE * last:
        return []
    name = next((key for key in EVAL_ACCURACY_KEYS if key in metrics and len(finite(metrics[key]))), None)
    accuracy = f", {name} {format_number(float(finite(metrics[name]).iloc[-1]))}" if name else ""
    step = int(evals.index[-1])
    message = (f"no training loss curve was logged, but the run's mean training loss was {format_number(run_mean)} and "
               f"its eval loss at step {step} is {format_number(last)}{accuracy}, after "
               f"{format_number(float(epochs.max()))} epochs: the model learned, down to reproducing the texts it is "
               "evaluated on nearly token for token after seeing its data that many times. The training data is most "
               "likely learned by heart (memorization), or the evaluation repeats it. Evaluate on texts it never saw; "
               "fewer epochs or more data.")
    return [Finding("memorization", "warning", step, message, end_step=step, metric=EVAL_LOSS, evidence={
        "value": last, "train_loss_mean": run_mean, "epoch": float(epochs.max()), "eval_loss_logged": True,
        "to_end": True, "training_loss_logged": False})]


def _no_loss_at_all(metrics: Metrics) -> list[Finding]:
    """A log that holds no loss, training or eval (steps and times only, or a learning rate alone):
    nothing says whether the run learned, which is a warning, never healthy."""
    logged = sorted(name for name, series in metrics.items() if len(series))
    steps = [int(series.index[0]) for series in metrics.values() if len(series)]
    seen = f"only {', '.join(logged[:5])}{' ...' if len(logged) > 5 else ''}" if logged else "no metric at all"
    message = (f"the logs hold no loss, training or eval ({seen}): nothing tells whether the run learned. "
               "Log the loss (logging_steps) and, where there is held-out data, an eval loss.")
    return [Finding("no_learning_evidence", "warning", min(steps, default=0), message,
                    evidence={"n_points": 0, "training_loss_logged": False, "metrics_logged": logged})]


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
    _, head, tail = _fell(-reward, thresholds, REWARD_TREND_Z)
    start, end = 0.0 - head, 0.0 - tail  # (not -head: a reward at 0 would be said "-0")
    # the message compares like with like: the mean of the first quarter of the points with that of the last (the
    # measure above may set the first point alone against the last tenth's median, which on a noisy reward can read
    # as a rise where the reward fell)
    k = max(1, len(reward) // 4)
    first, last = 0.0 + float(reward.iloc[:k].mean()), 0.0 + float(reward.iloc[-k:].mean())
    points = f"{k} logged points" if k > 1 else "logged point"
    message = (f"the reward did not rise clearly above its own noise: it averaged {format_number(first)} over the first "
               f"{points} and {format_number(last)} over the last {k if k > 1 else 'one'} ({len(reward)} points, steps "
               f"{int(reward.index[0])} to {int(reward.index[-1])}); in an RL run the reward, not the loss, shows "
               "learning, so nothing shows the policy improved. Check the learning rate, the reward functions and how "
               "many groups have any reward spread.")
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
