"""A pairwise preference log (DPO and kin): are its pairs told apart, on the training pairs and the held-out ones?

A pairwise log learned when the pairs are told apart: its loss ends clearly under ln 2 (fallen, and `PAIRWISE_CLEAR`
under it, or, over many points, under it by several times the log's own noise while the reward margin rose clearly)
or its reward accuracy ends at `PAIRWISE_ACCURATE` or more (a training accuracy having risen by `PAIRWISE_RISE` from
the log's first tenth, and by more than its batch-to-batch noise explains); where the log holds a held-out
evaluation, that evaluation must show it (`held_out_must_show`), unless it is a couple of evaluations that all moved
the right way. `pairs_told_apart` gives the evidence, `pairs_not_told_apart` the `no_learning_evidence` warning where
there is none.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .fall_measure import LearningEvidence, evidence_from, fell_clearly, without_blips
from .metrics import LN2, LOSS, Metrics, finite, format_number, is_preference_log, point_noise, real_loss
from .overfitting import EVAL_LOSS
from .reward_decline import reward_metric

_EMPTY = pd.Series(dtype="float64")


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


def held_out_must_show(metrics: Metrics, thresholds: Thresholds) -> bool:
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


def pairs_told_apart(metrics: Metrics, thresholds: Thresholds) -> tuple[LearningEvidence | None,
                                                                          LearningEvidence | None]:
    """(held-out evidence, training evidence) that the pairs are told apart, each None where it does not show."""
    return (_told_apart(metrics, EVAL_LOSS, "eval_rewards/accuracies", thresholds),
            _told_apart(metrics, LOSS, "rewards/accuracies", thresholds))


def _told_apart(metrics: Metrics, loss_name: str, accuracy_name: str,
                thresholds: Thresholds) -> LearningEvidence | None:
    if loss_name == LOSS and _odds_ratio_at_chance(metrics):
        return None  # ORPO's pair term never left ln 2: its accuracy is the sign of tiny margins, its fall the NLL's
    accuracy = finite(metrics[accuracy_name]) if accuracy_name in metrics else _EMPTY
    if loss_name == LOSS:
        accuracy = _without_ties(metrics, accuracy)
    if len(accuracy):
        k = max(1, len(accuracy) // 10)
        start, end = float(accuracy.iloc[:k].mean()), float(accuracy.iloc[-k:].mean())
        # a held-out evaluation comes after training steps (a reference model ranks no pair right: every margin 0);
        # a training accuracy, the mean over a few pairs a batch, must also have risen from where the log began,
        # and so must a reference-free objective's held-out one (ORPO's odds ratio ranks pairs from the start)
        risen = loss_name == EVAL_LOSS and not reference_free(metrics) or end >= start + PAIRWISE_RISE \
            and (loss_name == EVAL_LOSS or _rose_beyond_noise(accuracy, thresholds))
        if end >= PAIRWISE_ACCURATE and risen:
            return evidence_from(accuracy_name, accuracy, float(accuracy.iloc[0]), end)
    loss = real_loss(metrics) if loss_name == LOSS else finite(metrics.get(loss_name, _EMPTY))
    if len(loss) >= 2:
        fell, head, tail = fell_clearly(loss, thresholds)
        if tail <= LN2 - PAIRWISE_CLEAR and (fell or len(loss) < thresholds.learning_min_points or head < LN2):
            return evidence_from(loss_name, loss, head, tail)
        # ORPO / CPO add a language-model loss: its fall is learning too. A DPO loss may start above ln 2 as well
        # (the reference is not where the policy starts: giakhanhhii's SFT adapter), and its fall is no learning while
        # the pairs are still ranked the wrong way round
        if fell and head > _MIXED_START and (reference_free(metrics) or not _ranked_wrong(accuracy)):
            return evidence_from(loss_name, loss, head, tail)
        if loss_name == LOSS and _steadily_under_ln2(metrics, loss, thresholds) and _margins_rose(metrics, thresholds):
            return evidence_from(loss_name, loss, head, tail)
    return None


_STEADY_MIN_POINTS = 10  # a pairwise loss read against its own noise over this many points or more ...
_UNDER_LN2_UNITS = 3.0  # ... ends this many standard errors of its last tenth's median under ln 2


def _steadily_under_ln2(metrics: Metrics, loss, thresholds: Thresholds) -> bool:
    """A reference-based pairwise loss (DPO's, which starts at ln 2, the policy being its reference) that fell clearly
    (`fell_clearly`) over `_STEADY_MIN_POINTS` points or more to end under ln 2 by `_UNDER_LN2_UNITS` standard errors
    of its last tenth's median, measured by the log's own point-to-point noise: a slow fall short of `PAIRWISE_CLEAR`
    that no noise explains (aelalamy42's TRL DPO at LR 2e-7 on a LoRA: 500-step means falling 0.6930 -> 0.6700 by
    eighths, its noise 0.0016 a point). Not for ORPO / CPO / SimPO, whose loss carries a language-model term."""
    if reference_free(metrics) or len(loss) < _STEADY_MIN_POINTS:
        return False
    fell, _, tail = fell_clearly(loss, thresholds)
    values = without_blips(loss).to_numpy(dtype="float64")
    k = max(1, len(values) // 10)
    # (the median of k points varies by about 1.25 sigma / sqrt(k))
    standard_error = 1.2533 * point_noise(values) / np.sqrt(k)
    return fell and standard_error > 0 and LN2 - tail > _UNDER_LN2_UNITS * standard_error


def _margins_rose(metrics: Metrics, thresholds: Thresholds) -> bool:
    """A training reward margin (rewards/margins: the chosen answers' implicit reward less the rejected ones') that rose
    clearly over `_STEADY_MIN_POINTS` points or more, by the same measure as a falling loss turned over, to end above 0
    (the chosen answers rewarded above the rejected ones): aelalamy42's 0.0003 -> 0.0557, higher at every eighth. A
    reward accuracy over a few 16-pair batches is no such measure (intel-analytics' five warm-up batches)."""
    margins = finite(metrics["rewards/margins"]) if "rewards/margins" in metrics else _EMPTY
    if len(margins) < _STEADY_MIN_POINTS:
        return False
    rose, _, tail = fell_clearly(-margins, thresholds)
    return rose and -tail > 0


def _rose_beyond_noise(accuracy, thresholds: Thresholds) -> bool:
    """Whether a training reward accuracy rose by more than its own batch-to-batch noise explains (`fell_clearly` on
    the share of pairs ranked wrong): each point is the mean over a few pairs, and a rise from one batch to another
    is no trend (intel-analytics' DPO: 0.4375 -> 0.6875 over five 16-pair warm-up batches, 0.56-0.63 between)."""
    return fell_clearly(1 - accuracy, thresholds)[0]


def _without_ties(metrics: Metrics, accuracy):
    """The training reward accuracy less its points where every reward is exactly 0 (rewards/chosen and
    rewards/margins 0.0): a reference-based objective's first steps, the policy still its reference, where no pair is
    ranked either way and TRL counts each as wrong (accuracy 0.0). They are no measurement of the pairs."""
    chosen, margins = (finite(metrics[k]) if k in metrics else _EMPTY for k in ("rewards/chosen", "rewards/margins"))
    if not len(chosen) or not len(margins):
        return accuracy
    ties = chosen.index[chosen.to_numpy() == 0.0].intersection(margins.index[margins.to_numpy() == 0.0])
    ties = ties.intersection(accuracy.index[accuracy.to_numpy() == 0.0])
    return accuracy.drop(ties) if len(ties) < len(accuracy) else accuracy


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
    held = (f"the held-out reward accuracy stayed near chance "
            f"({', '.join(format_number(v) for v in accuracy.iloc[-4:])})"
            if len(accuracy) else "")
    if not len(evals):
        return held or "the held-out reward accuracy stayed near chance"
    shown = ", ".join(format_number(v) for v in evals.iloc[-4:])
    at_ln2 = bool(np.all(np.abs(evals.iloc[-4:].to_numpy() - LN2) <= PAIRWISE_CLEAR))
    loss_said = f"the held-out loss stayed at about ln 2 ({shown})" if at_ln2 else f"the held-out loss ended at {shown}"
    return f"{loss_said} and {held}" if held else loss_said


def pairs_not_told_apart(metrics: Metrics, loss, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_evidence` warning for a pairwise log whose pairs are not told apart (module docstring)."""
    held_out, train = pairs_told_apart(metrics, thresholds)
    evaluated = _has_held_out_pairs(metrics)
    if held_out is not None or (train is not None and not held_out_must_show(metrics, thresholds)):
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
        accuracy = _without_ties(metrics, accuracy)
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
