"""Never learned: the loss sits at the random-guess level and nothing moves.

Two levels are the signature of a model that learned nothing (VERDICTS.md):
* ln 2 = 0.6931 for a pairwise preference loss (DPO and kin): the policy and the reference
  agree on every pair. It learned nothing when the loss stays within `never_learned_tolerance`
  of ln 2 at (nearly) every logged step AND the gradients or rewards say so: grad_norm exactly
  0, or the rewards/margins exactly 0, or the loss not moving at all.
* about ln(vocabulary) for a fresh language-model head (9 to 13 for 8k to 440k tokens): a
  loss that sits flat in that range from the first step to the last, with grad_norm 0 or no
  movement, is a model that never got a gradient; or, however noisy, a hundred updates in and more beside a token
  accuracy no better than always predicting the commonest tokens (`_accuracy_at_token_frequencies`).
* ln k for a classifier or multiple-choice model over k answers (k = 2 to 20): the training loss at
  ln k at (nearly) every step, and the eval accuracy at chance too (about 1/k) (`classifier_at_chance`).
* any level, for a pairwise log (ORPO's loss carries an NLL term) whose held-out evaluation never moved (three
  evaluations or more over half the log and more, the eval loss within `_HELD_STILL` and the pair accuracy within
  `_ACCURACY_STILL`) while its training pairs stayed at chance (`_pairs_never_moved`).
* ln 2 or above for a pairwise reward model (the run profile says so) whose eval accuracy is at chance
  (`detect_reward_model_at_chance`), and for a DPO loss logged alone (the run profile says DPO) that never went
  clearly under it and did not fall (`detect_dpo_loss_never_under_chance`).
* any level, for a run logged from its start through a whole first epoch whose loss never moved (`unmoved`).
* any level, for a loss that did not fall beside a generation score (ROUGE, BLEU) near zero at every evaluation
  (`generation_scores.never_learned_by_the_score`).
(A language model stuck at ln(vocabulary) or, from scratch, at its first steps' level: `stuck_at_guess`.)
A DPO loss that falls below ln 2, or a pre-training loss that falls from ln(vocab), is healthy.
Always an error: a run that never learned is not usable.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .classifier_at_chance import at_chance
from .metrics import (EVAL_ACCURACY_KEYS, GRAD_NORM, LN2, LOSS, Metrics, finite, format_number, is_preference_log,
                      real_loss)
from .stuck_at_guess import STUCK_FROM
from .unmoved import FROM_THE_START, UNMOVED_POINTS, never_learned_finding, unmoved_for_an_epoch

FRESH_HEAD_RANGE = (9.0, 13.0)  # ln(8k) .. ln(440k): the loss of uniform guessing over a vocabulary
_REWARD_KEYS = ("rewards/margins", "rewards/chosen", "rewards/rejected")


def detect_never_learned(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `never_learned` error when the loss sits at the random-guess level and nothing moves, or []."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if loss is None or len(loss) < min(thresholds.never_learned_points, _FEWEST_STILL_PAIRWISE):
        return []
    values = loss.to_numpy()
    if is_preference_log(metrics) and len(loss) < thresholds.never_learned_points:
        # a few points are enough where nothing could have moved: no gradient at all, and no reward apart from 0
        still = _stillness(metrics, values, thresholds) if _zero_rewards(metrics) else None
        return _at_ln2(metrics, loss, values, thresholds) if still and still.startswith("grad_norm") else []
    if len(loss) < thresholds.never_learned_points:
        return []
    if is_preference_log(metrics):
        return (_at_ln2(metrics, loss, values, thresholds) or _pairs_never_moved(metrics, loss)
                or _pairs_never_preferred(metrics, loss))
    return (_at_fresh_head(metrics, loss, values, thresholds) or at_chance(metrics, loss, values)
            or unmoved_for_an_epoch(metrics, loss, values))


# a pairwise log at ln 2 with grad_norm exactly 0 and every reward exactly 0 at this many points is judged however short
# (TRL issue 4023: three DPO lines of 0.6934, grad_norm 0.0, rewards 0.0 while the warm-up raised the rate)
_FEWEST_STILL_PAIRWISE = 3


_TOLD_APART = 0.03  # a pairwise loss this far under ln 2 separates its pairs (a margin of about 0.06)
_CHANCE_PAIRS = 0.55  # a held-out pairwise accuracy at or under this is chance


def detect_reward_model_at_chance(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A pairwise reward model (the run profile says it is one; its loss is -log sigmoid(r_chosen - r_rejected))
    that never told its pairs apart: the later half of its training loss never clearly under ln 2 (scores that do
    not separate the pairs give ln 2, or more when they are noisy), and its held-out accuracy at chance (the later
    half's median at most `_CHANCE_PAIRS`). An error from the first logged step (XueyangFeng/ECPO: loss 0.70-0.75
    for three epochs, eval accuracy 0.469 and 0.449)."""
    loss = real_loss(metrics) if LOSS in metrics else None
    accuracy = next((finite(metrics[key]) for key in EVAL_ACCURACY_KEYS if key in metrics), None)
    if loss is None or len(loss) < thresholds.never_learned_points or accuracy is None or not len(accuracy):
        return []
    level = float(loss.iloc[len(loss) // 2:].median())
    held_out = float(accuracy.iloc[len(accuracy) // 2:].median())
    if level < LN2 - _TOLD_APART or held_out > _CHANCE_PAIRS:
        return []
    message = (f"the reward model never learned: its pairwise loss stays at about {format_number(level)} over the "
               f"later half of the log (ln 2 = 0.6931 is a coin flip between the two answers; above it, noisy scores "
               f"that still do not separate them) and its eval accuracy is {format_number(held_out)} (chance is 0.5). "
               "Check that the chosen and rejected answers are in the right columns and differ, the learning rate, and "
               "that the value head is trained.")
    return [never_learned_finding(loss, message, {"level": level, "reason": "reward model at chance",
                                     "eval_accuracy": held_out})]


_STILL_FALLING = 0.01  # a later half this far under the first half's median: a slow descent, not a stuck one
_DPO_START_SPREAD = 0.15  # a sigmoid DPO loss's first points: ln 2, up to this above it with dropout's noise


def detect_dpo_loss_never_under_chance(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A DPO loss logged alone (a hand-written loop: no rewards/* or logps/* beside it; the run profile says DPO)
    that never went clearly under ln 2 and did not fall: both halves' medians at least ln 2 - `_TOLD_APART`, the
    later not under the first by `_STILL_FALLING`. -log sigmoid(beta x margin) is ln 2 where the policy ranks a
    pair as the reference does and more where it ranks it worse: the policy never came to prefer the chosen
    answers (PhuocThuan246's mT5 DPO: 0.744 at the first of 25 points, 0.851 at the last). Only a loss whose first
    points sit at ln 2 (up to `_DPO_START_SPREAD` above) is such a loss. An error from the first step."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if loss is None or len(loss) < thresholds.never_learned_points or is_preference_log(metrics):
        return []
    half = len(loss) // 2
    first, later = float(loss.iloc[:half].median()), float(loss.iloc[half:].median())
    start = float(loss.iloc[:3].median())
    scaled = _held_at_a_share_of_ln2(loss)
    if scaled is not None:
        return [scaled]
    if not LN2 - _TOLD_APART <= start <= LN2 + _DPO_START_SPREAD:
        return []  # no sigmoid DPO loss: it starts at ln 2 (an SFT stage's loss, IPO's or a hinge's start elsewhere)
    if min(first, later) < LN2 - _TOLD_APART or later < first - _STILL_FALLING:
        return []
    message = (f"the DPO loss never went under ln 2 = 0.6931 (the policy ranking each pair as the reference does): "
               f"about {format_number(first)} over the first half of the log and {format_number(later)} over the "
               f"later half ({len(loss)} points), so the policy never came to prefer the chosen answers. Check that "
               "the chosen and rejected answers are not swapped, that the reference is a frozen copy of the starting "
               "policy, the learning rate and beta.")
    return [never_learned_finding(loss, message, {"level": later, "first_half": first,
                                                  "reason": "dpo loss never under ln 2"})]


_MAX_SHARE = 16  # a loss printed divided by its accumulation steps: ln 2 / k for k up to this many (past it, a
# flat loss near some ln 2 / k is a coincidence as often as not)
_SHARE_POINTS = 16  # logged points, two an eighth at least
_SHARE_MATCH = 0.005  # the first loss within this share of ln 2 / k


def _held_at_a_share_of_ln2(loss) -> Finding | None:
    """A hand-written DPO loop's loss that starts at ln 2 / k (k = 2 to `_MAX_SHARE`: the per-pair loss divided
    by k accumulation steps before it is printed) and whose every eighth's median stays within `_EIGHTHS_STILL` of
    that start: the policy still ranks each pair as the reference does, as at its first step (JunyiJ's Gemma-2-2B
    DPO: 0.1386 = ln 2 / 5 at step 1, eighth medians 0.1384-0.1389 over 500 steps). Else None."""
    start = float(loss.iloc[0])
    if len(loss) < _SHARE_POINTS:
        return None
    k = round(LN2 / start) if start > 0 else 0
    if not 2 <= k <= _MAX_SHARE or abs(start - LN2 / k) > _SHARE_MATCH * LN2 / k:
        return None
    level = LN2 / k
    eighths = [float(np.median(part)) for part in np.array_split(loss.to_numpy(), 8)]
    if max(abs(m - level) for m in eighths) > _EIGHTHS_STILL * level:
        return None
    message = (f"the DPO loss starts at {format_number(start)} = ln 2 / {k} (the per-pair loss at chance, divided by "
               f"{k} accumulation steps before it is printed) and the median of every eighth of the log stays within "
               f"{100 * _EIGHTHS_STILL:.2g}% of it ({len(loss)} points): the policy still ranks each pair as the "
               "reference does, as at its first step, so it never learned. Check that the policy's trainable weights "
               "(an adapter) are the ones the optimizer updates and that they reach the forward pass, that the "
               "reference is a frozen copy, the learning rate and beta.")
    return never_learned_finding(loss, message, {"level": level, "accumulation": k,
                                                 "reason": "dpo loss held at ln 2 / k"})


def _at_ln2(metrics: Metrics, loss, values, thresholds: Thresholds) -> list[Finding]:
    near = np.abs(values - LN2) <= thresholds.never_learned_tolerance
    why = (_stillness(metrics, values, thresholds) or _zero_rewards(metrics)) if near.mean() >= 0.9 else None
    if why is None:
        # margins within _ZERO_MARGIN move a pair's loss by up to half of that: a loss that far from ln 2 has not
        # left it either (Arun-vEDU's 0.688 beside a margin of 0.0138)
        near = np.abs(values - LN2) <= thresholds.never_learned_tolerance + _ZERO_MARGIN / 2
        why = _margins_at_zero(metrics, len(values), thresholds) if near.mean() >= 0.9 else None
    if why is None:
        return []
    message = (f"the model never learned: the preference loss stays at ln 2 = 0.6931 (random choice between the "
               f"two answers) at {int(near.sum())} of {len(values)} logged steps, and {why}. Check that the "
               "chosen and rejected answers differ, that the reference model is not the policy itself with "
               "frozen weights, and the learning rate.")
    return [never_learned_finding(loss, message, {"level": LN2, "reason": why, "share_at_level": float(near.mean())})]


_HELD_STILL = 0.005  # held-out losses within this share of their median: the evaluation did not move
_ACCURACY_STILL = 0.05  # held-out pair accuracies within this of each other


def _pairs_never_moved(metrics: Metrics, loss) -> list[Finding]:
    """A pairwise log whose held-out evaluation did not move over three evaluations or more spanning half the log
    (eval loss within `_HELD_STILL` of its median, pair accuracy within `_ACCURACY_STILL`) while its training pairs
    were ranked right at chance (the later half's accuracy at most `_CHANCE_PAIRS`) and gradients flowed: the updates
    changed nothing the model prefers (AMindToThink's ORPO sweep: eval loss 2.2264 -> 2.2234 and eval accuracy
    0.60 at four evaluations over two epochs, training accuracy 0.44-0.56)."""
    evals = finite(metrics["eval_loss"]) if "eval_loss" in metrics else None
    held_accuracy = finite(metrics["eval_rewards/accuracies"]) if "eval_rewards/accuracies" in metrics else None
    train_accuracy = finite(metrics["rewards/accuracies"]) if "rewards/accuracies" in metrics else None
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else None
    if evals is None or len(evals) < 3 or train_accuracy is None or not len(train_accuracy) or grad is None \
            or not len(grad) or not float(grad.median()) > 0:
        return []
    span = int(evals.index[-1]) - int(evals.index[0])
    level = float(np.median(evals.to_numpy()))
    if span < (int(loss.index[-1]) - int(loss.index[0])) / 2 or not level > 0 \
            or float(np.ptp(evals.to_numpy())) > _HELD_STILL * level:
        return []
    if held_accuracy is not None and len(held_accuracy) and float(np.ptp(held_accuracy.to_numpy())) > _ACCURACY_STILL:
        return []
    trained = float(train_accuracy.iloc[len(train_accuracy) // 2:].median())
    if trained > _CHANCE_PAIRS:
        return []
    held = (f" and its pair accuracy at {format_number(float(held_accuracy.median()))}"
            if held_accuracy is not None and len(held_accuracy) else "")
    message = (f"the model never learned: its held-out evaluation did not move over {len(evals)} evaluations (steps "
               f"{int(evals.index[0])} to {int(evals.index[-1])}): the eval loss {format_number(float(evals.iloc[0]))} "
               f"-> {format_number(float(evals.iloc[-1]))}{held}, while the training pairs were ranked right at chance "
               f"(accuracy {format_number(trained)} over the later half; chance is 0.5) and grad_norm was about "
               f"{format_number(float(grad.median()))}: the updates changed nothing the model prefers. Check that the "
               "trained parameters are in the forward pass (an adapter the model uses), the learning rate and beta, "
               "and that the chosen and rejected answers differ.")
    return [never_learned_finding(loss, message, {"level": level, "reason": "held-out evaluation never moved",
                                     "train_pair_accuracy": trained})]


_HELD_OUT_PAIRS = 3  # evaluations needed to say the held-out pairs were never ranked right


def _pairs_never_preferred(metrics: Metrics, loss) -> list[Finding]:
    """A pairwise log whose training loss never went clearly under ln 2 (both halves' medians at least ln 2 -
    `_TOLD_APART`), whose held-out loss stayed at or above ln 2 at every evaluation and whose held-out pair accuracy
    never rose above chance (at most 0.5 at each of `_HELD_OUT_PAIRS` or more evaluations): the policy ranks held-out
    pairs no better than, or worse than, the reference, and never came to prefer the chosen answers
    (rlyCarlson/cs234's DPO: loss 0.70-0.87 at 89 points, eval loss 0.798 -> 0.746, eval accuracy 0.4808 at all 17
    evaluations, eval margins -0.042 -> -0.026)."""
    evals = finite(metrics["eval_loss"]) if "eval_loss" in metrics else None
    held = finite(metrics["eval_rewards/accuracies"]) if "eval_rewards/accuracies" in metrics else None
    if evals is None or held is None or len(evals) < _HELD_OUT_PAIRS or len(held) < _HELD_OUT_PAIRS:
        return []
    half = len(loss) // 2
    first, later = float(loss.iloc[:half].median()), float(loss.iloc[half:].median())
    if min(first, later) < LN2 - _TOLD_APART or float(evals.min()) < LN2 or float(held.max()) > 0.5:
        return []
    message = (f"the model never learned to prefer the chosen answers: the preference loss never went under ln 2 = "
               f"0.6931 (about {format_number(first)} over the first half of the log, {format_number(later)} over the "
               f"later half), the held-out loss stayed above it ({format_number(float(evals.iloc[0]))} -> "
               f"{format_number(float(evals.iloc[-1]))}) and the held-out pair accuracy never rose above chance "
               f"(at most {format_number(float(held.max()))} over {len(held)} evaluations). Check that the chosen and "
               "rejected answers are not swapped, that the reference is a frozen copy of the starting policy, the "
               "learning rate and beta.")
    return [never_learned_finding(loss, message, {"level": later, "first_half": first,
                                                  "reason": "held-out pairs never preferred",
                                                  "held_out_accuracy": float(held.max())})]


def _at_fresh_head(metrics: Metrics, loss, values, thresholds: Thresholds) -> list[Finding]:
    lo, hi = FRESH_HEAD_RANGE
    level = float(np.median(values))
    if not lo <= level <= hi:
        return []
    spread = (values.max() - values.min()) / level
    why = _stillness(metrics, values, thresholds) if spread <= thresholds.never_learned_spread else None
    why = why or _level_held(metrics, loss, values, level) or _accuracy_at_token_frequencies(metrics, loss, thresholds)
    if why is None:
        return []
    message = (f"the model never learned: the loss stays at about {format_number(level)} (about ln of a vocabulary of "
               f"{format_number(math.exp(level))} tokens: uniform guessing, as from a fresh output head) from step "
               f"{int(loss.index[0])} to step {int(loss.index[-1])}, and {why}. Check that the weights were "
               "loaded, that parameters require gradients and that the learning rate is not 0.")
    return [never_learned_finding(loss, message, {"level": level, "reason": why, "spread": float(spread)})]


_EIGHTHS_STILL = 0.01  # every eighth's median within this share of the level: no trend at all


def _level_held(metrics: Metrics, loss, values, level: float) -> str | None:
    """Why a loss at the fresh-head level did not move, or None: the median of each eighth of the log within
    `_EIGHTHS_STILL` of its level, logged from the run's start (epoch `FROM_THE_START` at most) through a whole
    epoch and more (linhuall's ChatGLM-6B P-Tuning: eighth medians 11.437-11.475 over four epochs, ln 130528 =
    11.78), or `_MID_RUN_POINTS` points or more from step `STUCK_FROM` on, a model still there after a hundred
    updates (CPM-1's fine-tune, issue 3: 11.49-11.63 from step 750 to 910, ln 30000 = 10.31). Its batches scatter it
    by a few percent; a model that learns leaves that level within tens of steps."""
    epochs = finite(metrics["epoch"]) if "epoch" in metrics else None
    whole_epoch = epochs is not None and len(epochs) > 0 and len(values) >= UNMOVED_POINTS \
        and epochs.min() <= FROM_THE_START and epochs.max() >= 1.0
    mid_run = int(loss.index[0]) >= STUCK_FROM and len(values) >= _MID_RUN_POINTS
    if not (whole_epoch or mid_run):
        return None
    eighths = [float(np.median(part)) for part in np.array_split(values, 8)]
    if max(abs(m - level) for m in eighths) > _EIGHTHS_STILL * level:
        return None
    span = (f"over {format_number(float(epochs.max()))} epochs" if whole_epoch else
            f"from step {int(loss.index[0])}, {int(loss.index[0])} updates in")
    return f"the median of every eighth of the log stays within {100 * _EIGHTHS_STILL:.2g}% of it {span}"


_MID_RUN_POINTS = 10
# the training token accuracy as each reader names it, and what it is counted out of (OpenNMT-py prints a percentage)
_TOKEN_ACCURACY = (("mean_token_accuracy", 1.0), ("token_acc", 1.0), ("accuracy_pct", 100.0))
_FREQUENCIES_ACCURACY = 0.08  # predicting the most frequent token (English 'the', ',', '.') is right 4-7% of the time


def _accuracy_at_token_frequencies(metrics: Metrics, loss, thresholds: Thresholds) -> str | None:
    """Why a loss at the fresh-head level, too noisy for `_level_held`, is still a model that never learned, or None:
    `_MID_RUN_POINTS` points or more from step `STUCK_FROM` on, nothing showing it learned (the measure
    `no_learning_evidence` reads), and the training token accuracy at every logged point at most
    `_FREQUENCIES_ACCURACY`, no better than always predicting the commonest tokens (OpenNMT-py issue 709: xent 7.7-10.7
    nats, swinging 3 nats within 150 batches, at 1.9-5.7% token accuracy from batch 12,850 on). A model that learned
    anything of its targets predicts far more of them."""
    from .learning_evidence import learning_shown  # (learning_evidence imports this module's neighbours)
    name, scale = next(((key, scale) for key, scale in _TOKEN_ACCURACY if key in metrics), (None, 1.0))
    accuracy = finite(metrics[name]) / scale if name else None
    if accuracy is None or len(accuracy) < _MID_RUN_POINTS or int(loss.index[0]) < STUCK_FROM \
            or len(loss) < _MID_RUN_POINTS or float(accuracy.max()) > _FREQUENCIES_ACCURACY \
            or learning_shown(metrics, thresholds) is not None:
        return None
    return (f"the token accuracy never rose above {100 * float(accuracy.max()):.2g}% at {len(accuracy)} logged points "
            f"from step {int(accuracy.index[0])}, {int(loss.index[0])} updates in (always predicting the commonest "
            "tokens is right about 4-7% of the time), with no sign of the loss falling")


def _stillness(metrics: Metrics, values, thresholds: Thresholds) -> str | None:
    """Why the run did not move, or None if it did: grad_norm exactly 0, or a loss that never changes."""
    grad = metrics.get(GRAD_NORM)
    if grad is not None:
        g = finite(grad).to_numpy()
        if len(g) and np.all(g == 0.0):
            return "grad_norm is exactly 0 at every logged step"
    if np.ptp(values) <= thresholds.never_learned_still:
        return f"the loss does not move at all (it changes by at most {format_number(np.ptp(values))})"
    return None


def _zero_rewards(metrics: Metrics) -> str | None:
    for key in _REWARD_KEYS:
        series = metrics.get(key)
        if series is not None and len(finite(series)) and np.all(finite(series).to_numpy() == 0.0):
            return f"{key} is exactly 0 at every logged step"
    return None


# a reward margin (beta x the log-ratio difference) this small at every point: no preference (the loss of a pair
# with margin m is ln 2 - m/2 + ...: 0.02 moves it 0.01, inside the tolerance a loss at ln 2 is read with)
_ZERO_MARGIN = 0.02


def _margins_at_zero(metrics: Metrics, points: int, thresholds: Thresholds) -> str | None:
    """Why a pairwise loss at ln 2 never moved, from its reward margins: every logged margin (training and held-out)
    within `_ZERO_MARGIN` of 0 over `never_learned_points` or more points (as many as any never_learned judgement needs:
    the same run logged every 20 steps instead of 10 says it as well), the training pair accuracy's median no better
    than chance (AnnieL66's DPO at LR 5e-7: loss 0.6907-0.6952 over 18 points, margins -0.003 to 0.004, accuracy
    0.48-0.52, grad_norm about 2). An accuracy far under chance beside margins this small is ties, which TRL counts as
    wrong, not pairs ranked the wrong way (Arun-vEDU's LoRA DPO at 5e-7: accuracy 0.13-0.17, margins -0.003 to 0.014,
    the loss at ln 2 +- 0.005 for three epochs); else None."""
    margins = finite(metrics["rewards/margins"]) if "rewards/margins" in metrics else None
    if margins is None or min(points, len(margins)) < thresholds.never_learned_points:
        return None
    held = finite(metrics["eval_rewards/margins"]) if "eval_rewards/margins" in metrics else margins.iloc[:0]
    accuracy = finite(metrics["rewards/accuracies"]) if "rewards/accuracies" in metrics else None
    largest = float(max(np.abs(margins.to_numpy()).max(), np.abs(held.to_numpy()).max() if len(held) else 0.0))
    if largest > _ZERO_MARGIN or accuracy is not None and len(accuracy) and float(accuracy.median()) > _CHANCE_PAIRS:
        return None
    return (f"the reward margin between chosen and rejected stays within {format_number(largest)} of 0 at every one of "
            f"{len(margins)} logged points{' and at every evaluation' if len(held) else ''}")
