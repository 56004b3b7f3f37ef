"""No update at all: grad_norm exactly 0 at every logged step, and the log shows nothing learned.

A gradient norm of exactly 0.0 is no small gradient: nothing reached the trainable weights (an adapter or
parameters that do not require gradients, gradient checkpointing on a PEFT model without input
gradients, a detached loss, GRPO advantages that are all 0). When it is 0 at every one of at least
`_MIN_POINTS` logged steps and neither the loss nor the reward improved, the weights never changed: a
`no_learning_signal` error (VERDICTS.md: never learned, with grad_norm 0). Where the loss or reward did
improve, or an RL log's KL to the reference rose, the zeros are the logging's (some DeepSpeed versions
report 0), not the training's, and nothing is said. Runs the other detectors already name (a loss of
exactly 0 with masked labels, a fresh head at ln(vocabulary), GRPO groups that all scored alike) are left
to them.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .dead_reward import REWARD_STD, ZERO_STD, detect_dead_reward_signal
from .learning_evidence import learning_shown
from .metrics import (GRAD_NORM, LOSS, Metrics, finite, first_settled, format_number, head_and_tail,
                      masked_loss_steps, real_loss)
from .never_learned import detect_never_learned
from .preference_pairs import is_pairwise_log
from .reward_decline import reward_metric
from .skipped_steps import scaler_shown

_MIN_POINTS = 5


def detect_no_gradient(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error over the whole log (a warning where it has too few points to call the model
    frozen: `_zero_at_its_few_points`), or []."""
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics else None
    if grad is None or grad.empty or np.any(grad.to_numpy() != 0):
        return []
    loss = real_loss(metrics)
    if len(loss) and np.all(loss.to_numpy() == 0.0):
        return []  # loss and grad_norm both 0: masked labels, the collapse detector's no_learning_signal
    if grad.index.isin(masked_loss_steps(metrics)).all():
        return []  # every step overflowed, DeepSpeed's 0 for a skipped one: `masked_nan` says so
    if _improved(metrics, thresholds) or _policy_moved(metrics):
        return []
    if detect_never_learned(metrics, thresholds) or detect_dead_reward_signal(metrics, thresholds):
        return []
    if len(grad) < max(_MIN_POINTS, thresholds.learning_min_points):
        return _zero_at_its_few_points(metrics, thresholds, grad)
    first, last = int(grad.index[0]), int(grad.index[-1])
    message = (f"grad_norm is exactly 0 at every one of the {len(grad)} logged steps ({first} to {last}) and the log "
               "shows nothing learned: no gradient reached the trainable weights, so they never changed. Check that "
               "the adapter or parameters require gradients (gradient checkpointing on a PEFT model needs the inputs "
               "to require grads), that the loss is not detached from the model, and in GRPO that the advantages are "
               "not all 0; a DeepSpeed release that reports the norm as 0 would leave the loss or reward improving, "
               "which this one does not.")
    return [Finding("no_learning_signal", "error", first, message, end_step=last, metric=GRAD_NORM,
                    evidence={"points": int(len(grad)), "grad_norm_zero": True, "frozen": True})]


def _zero_at_its_few_points(metrics: Metrics, thresholds: Thresholds, grad) -> list[Finding]:
    """A `no_learning_signal` warning for a log of fewer than `_MIN_POINTS` grad_norms, every one exactly 0, beside a
    finite non-zero loss at each: at every step the log shows, no gradient reached the trainable weights (a PEFT model
    with gradient checkpointing and no input gradients gives exactly 0 from its first update). Too few points to say
    the weights never changed (a DeepSpeed release may log the norm as 0), so a warning. Not an RL log (a zero
    gradient there is groups that scored alike), nor one whose loss scaler may have skipped those steps."""
    loss = real_loss(metrics)
    steps = [int(s) for s in grad.index]
    if reward_metric(metrics) is not None or scaler_shown(metrics, thresholds) or \
            not all(s in loss.index and float(loss[s]) != 0.0 for s in steps):
        return []
    shown = ", ".join(str(s) for s in steps)
    message = (f"grad_norm is exactly 0 at every logged step ({shown}) while the loss there is finite and non-zero "
               f"(about {format_number(float(loss[steps].median()))}): no gradient reached the trainable weights at "
               "any step the log shows, so they are not moving. Check that the adapter or parameters require "
               "gradients (gradient checkpointing on a PEFT model needs the inputs to require grads: "
               "enable_input_require_grads, or use_reentrant False) and that the loss is not detached from the model; "
               "with this few points the log cannot rule out a release that reports the norm as 0.")
    return [Finding("no_learning_signal", "warning", steps[0], message, end_step=steps[-1] if len(steps) > 1 else None,
                    metric=GRAD_NORM, evidence={"points": len(steps), "grad_norm_zero": True, "frozen": False})]


_MOSTLY_ZERO = 0.8  # an RL log's grad_norm exactly 0 at this share of its points from some step to the end ...
_ZERO_SPAN = 0.5  # ... over at least this share of the log


def detect_rl_gradient_gone(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `no_learning_signal` error for an RL log whose grad_norm is exactly 0 at `_MOSTLY_ZERO` of its points from
    some step to the end (over `_ZERO_SPAN` of the log or more) while the reward does not rise there, or []. In GRPO a
    zero gradient is every advantage 0: each group's completions scored alike, as a policy that collapsed to one
    answer does (JuncyLu's GRPO on Qwen2.5-VL: bare two-token answers from step 20, grad_norm 0 at 42 of the 48
    points after it, frac_reward_zero_std 0.7-1.0, the reward flat). The few non-zero points between are groups
    that still differed, too few to move the policy. A log whose every point is 0 is `detect_no_gradient`'s."""
    reward_name = reward_metric(metrics)
    grad = finite(metrics[GRAD_NORM]) if GRAD_NORM in metrics and reward_name else None
    if grad is None or len(grad) < max(_MIN_POINTS, thresholds.learning_min_points) or np.all(grad.to_numpy() == 0):
        return []
    zero = grad.to_numpy() == 0
    begin = first_settled(zero, _MOSTLY_ZERO)
    if begin is None or len(grad) - begin < max(_MIN_POINTS, _ZERO_SPAN * len(grad)):
        return []
    first = int(grad.index[begin])
    later = {name: series[series.index >= first] for name, series in metrics.items()}
    if _improved(later, thresholds) or _policy_moved(later) or _groups_still_differ(metrics, first):
        return []
    if detect_dead_reward_signal(metrics, thresholds):
        return []  # groups that all scored alike, told by their own spread (a saturated reward among them)
    reward = finite(later[reward_name])
    start, end = head_and_tail(reward) if len(reward) else (math.nan, math.nan)
    zeros = int(zero[begin:].sum())
    message = (f"grad_norm is exactly 0 at {zeros} of the {len(grad) - begin} logged steps from step {first} on, and "
               f"the {reward_name} does not rise there (about {format_number(start)} -> {format_number(end)}): in "
               "GRPO-style training a zero gradient means every advantage was 0, each group's completions scored "
               "alike, so the policy stopped learning. Look at the completions from that step (one short answer for "
               "every prompt is a collapsed policy); make the reward tell completions apart, sample more varied "
               "completions (temperature; per prompt: TRL's num_generations, verl's actor_rollout_ref.rollout.n), "
               "and restart from a checkpoint saved before it.")
    return [Finding("no_learning_signal", "error", first, message, end_step=int(grad.index[-1]), metric=GRAD_NORM,
                    evidence={"zero_points": zeros, "points": int(len(grad) - begin), "grad_norm_zero": True})]


def _groups_still_differ(metrics: Metrics, first: int) -> bool:
    """The log's own reward spread says most groups scored their completions differently from `first` on (TRL's
    frac_reward_zero_std under a half there; or, without it, a reward_std that did not shrink to under half its level
    before): their advantages were not 0, so an exactly-0 grad_norm there is the logging's (a DeepSpeed release that
    reports it as 0), not the training's."""
    for name, differ in ((ZERO_STD, lambda after, before: float(np.median(after)) < 0.5),
                         (REWARD_STD, lambda after, before: len(before) > 0
                          and float(np.median(after)) >= 0.5 * float(np.median(before)))):
        series = finite(metrics[name]) if name in metrics else None
        if series is not None and len(series[series.index >= first]):
            return differ(series[series.index >= first].to_numpy(), series[series.index < first].to_numpy())
    return False


_SAME_BATCHES = 5  # losses in a row, batch for batch, that an epoch repeats from the one before


def detect_repeated_epoch_losses(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """An epoch whose losses are the epoch before's, batch for batch, to every printed decimal: a loop that feeds
    its batches in the same order each epoch (no shuffling) and whose weights no update changed (an adapter with
    no gradient, an optimizer that steps nothing, a learning rate of 0) gets exactly the same loss on the same
    batch again. `_SAME_BATCHES` equal in a row from the second epoch's start cannot be chance: a `no_learning_signal`
    error from the first step (BeyonderXX/TRACE issue 5: 0.9741, 1.3742, 1.2390, ... in epochs 1 and 2). Only the
    first two epochs are compared: a run that learned and levelled off can repeat a coarse print in later ones."""
    loss = real_loss(metrics)
    epochs = finite(metrics["epoch"]).reindex(loss.index) if "epoch" in metrics else None
    if epochs is None or len(loss) < 2 * _SAME_BATCHES:
        return []
    whole = np.floor(epochs.to_numpy())
    values = loss.to_numpy()
    # the first epoch against the second only: weights that never changed repeat from the start, where a run
    # that learned and levelled off can repeat a coarse print (`loss 5.53`) late in the run
    starts = [i for i in range(1, len(whole)) if np.isfinite(whole[i]) and whole[i] > whole[i - 1]][:1]
    for i in starts:
        before = np.flatnonzero(whole == whole[i - 1])  # the positions of the epoch before, in order
        now = np.flatnonzero(whole == whole[i])
        k = min(len(before), len(now), _SAME_BATCHES)
        again = values[now[:k]]
        if k == _SAME_BATCHES and np.array_equal(values[before[:k]], again) and _telling(again):
            first, at = int(loss.index[0]), int(loss.index[i])
            shown = ", ".join(f"{v:g}" for v in again)
            message = (f"the epoch that starts at step {at} repeats the losses of the epoch before, batch for batch "
                       f"({shown}: the same {k} values in the same order): the same batches give exactly the same "
                       "loss, so no update changed the weights from the first step. Check that the trainable "
                       "parameters (the adapter) require gradients and reach the optimizer, that the learning rate is "
                       "not 0, and that optimizer.step() runs.")
            return [Finding("no_learning_signal", "error", first, message, end_step=int(loss.index[-1]), metric=LOSS,
                            evidence={"repeated_epoch": float(whole[i]), "repeated_from": at, "frozen": True})]
    return []


def _telling(values: np.ndarray) -> bool:
    """Losses that say which batch gave them: three different values or more, none near a print's rounding floor (a
    memorized run's 0.0001, 0.0002 repeat by rounding, not because nothing changed)."""
    return len(set(values.tolist())) >= 3 and float(np.min(values)) >= _ABOVE_ROUNDING


_ABOVE_ROUNDING = 0.01


def _improved(metrics: Metrics, thresholds: Thresholds) -> bool:
    """The log shows the run getting better over its course. A pairwise loss is held to that too: one that sits
    under ln 2 from its first point, unmoved, was told apart by the reference model's difference from the policy
    before any update (DehaoDai/minillm: an SFT policy against its base, 0.61 to the end with grad_norm 0)."""
    shown = learning_shown(metrics, thresholds)
    if shown is None:
        return False
    if not is_pairwise_log(metrics) or "accurac" in shown.metric:
        return True
    return shown.start - shown.end >= thresholds.learning_min_fall * abs(shown.start)


def _policy_moved(metrics: Metrics) -> bool:
    """An RL log's KL to the reference rising clearly (to over twice its start, above 1e-4): the weights did
    change, whatever grad_norm says (a DeepSpeed release that logs the norm as 0)."""
    kl = finite(metrics["kl"]) if "kl" in metrics else None
    if kl is None or len(kl) < 4:
        return False
    start, end = head_and_tail(kl)
    return end > 1e-4 and end > 2 * max(start, 0.0)
