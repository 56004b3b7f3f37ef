"""grad_norm spikes: a jump far above the recent robust baseline (see `spikes`), and whether it settled.

A recovered spike is a warning. Several spikes in a row (`spike_storm_count`, each within
`spike_storm_gap` points of the last) are one unstable stretch and one finding, named by its
largest spike. A jump right at a learning-rate restart is a new training phase (info), and so is a
recovered spike the loss did not react to (the heavy tail of a steady run's grad_norm: under
`spike_quiet_loss_factor`, or when each jump is a lone point or two within 15x the first steps' range; the loss's
median over the spike no higher than 1.25x and 0.1 nats over its median before, nor its jump at the spike over a
falling trend), and a spike no
larger than the run's first steps' grad_norm against a median that fell many-fold since (or in a
preference run) while the loss stays low, and a storm recurring through most of the run under which the
grad_norm's and the loss's levels held while the eval loss kept falling (clipped norms of single hard batches). A
spike followed by non-finite values or a collapse is made an error by the chain linking in
`chain`, which also records it as their cause.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import (GRAD_NORM, LOSS, Metrics, finite, format_number, is_preference_log, point_noise, real_loss,
                      true_runs)
from .dead_reward import no_spread_points
from .overfitting import EVAL_LOSS
from .reward_decline import reward_metric
from .spike_findings import spike_findings
from .spikes import SpikeRule, find_spikes


def grad_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.spike_recover_factor, recover_points=thresholds.spike_recover_points,
                     early_factor=thresholds.spike_early_factor, early_whole=True)


def detect_grad_norm_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`grad_norm_spike` findings (warnings; the chain may raise them): one per spike, or one per storm."""
    grad = metrics.get(GRAD_NORM)
    if grad is None:
        return []
    # an exact 0 is a step with no gradient at all (a skipped update, a GRPO batch whose groups all scored
    # alike), not part of the level a spike stands out from
    grad = grad[grad.to_numpy() != 0.0]
    grad = _without_no_spread_steps(grad, metrics)
    spikes = find_spikes(grad, grad_spike_rule(thresholds))
    findings = spike_findings("grad_norm_spike", GRAD_NORM, grad, spikes, metrics, thresholds,
                              warn_factor=thresholds.spike_warn_factor)
    findings = [_unless_low_start_of_a_two_level_series(f, grad, thresholds) for f in findings]
    loss = real_loss(metrics) if LOSS in metrics else None
    findings = [_unless_start_up_transient(f, grad, loss, thresholds) for f in findings]
    reward_name = reward_metric(metrics)
    if reward_name is not None:  # RL: the loss is ~0 by construction, the reward is what would react
        return [_unless_reward_steady(f, grad, finite(metrics[reward_name]), thresholds) for f in findings]
    # the narrower reason first: a spike no taller than the run's first steps says more than "the loss held"
    findings = [_unless_within_early_range(f, grad, loss, is_preference_log(metrics)) for f in findings]
    findings = [_unless_storm_in_a_steady_run(f, loss, grad, thresholds) for f in findings]
    findings = [_unless_heavy_tail_under_a_falling_eval(f, loss, grad, metrics.get(EVAL_LOSS), thresholds)
                for f in findings]
    return [_unless_loss_steady(f, loss, grad, thresholds) for f in findings]


def _as_info(finding: Finding, note: str, **evidence) -> Finding:
    """The finding made info, `note` (why it is no incident) added to its message and `evidence` to its numbers."""
    return replace(finding, severity="info", message=finding.message.rstrip(".") + note + ".",
                   evidence={**finding.evidence, **evidence})


def _without_no_spread_steps(grad: pd.Series, metrics: Metrics) -> pd.Series:
    """The grad_norm of an RL log without its steps whose reward groups had no spread at all (TRL's
    frac_reward_zero_std 1, reward_std 0) where their grad_norm is the KL term's alone: their advantages are 0,
    which leaves a gradient `_KL_ONLY` times or more under the steps whose groups differ. ps-research's saturated
    GRPO: 0.006 at most steps, 1-11 at the few whose groups still differ, which are its ordinary gradients, not
    spikes over the KL-only ones. A no-spread step with a larger grad_norm stays (the KL term blowing up is news)."""
    dead = no_spread_points(metrics)
    if dead is None or not dead.any():
        return grad
    dead_steps = grad.index.isin(dead.index[dead.to_numpy()])
    live = finite(grad[~dead_steps])
    if live.empty:
        return grad
    kl_only = dead_steps & (grad.to_numpy() < float(live.median()) / _KL_ONLY)
    return grad[~kl_only]


_KL_ONLY = 10.0


def _unless_storm_in_a_steady_run(finding: Finding, loss: pd.Series | None, grad: pd.Series,
                                  thresholds: Thresholds) -> Finding:
    """A storm of spikes spread over a long stretch of a per-step log on tiny batches (a spike every few dozen
    points, against a median that fell as the run learned) is the heavy tail of a steady run's gradient when
    each jump is short (`_SHORT` points at most above half its height) and the run did not change under it: the grad_norm's median over the stretch is no higher than before it, no
    spike is taller than `_STORM_RANGE` x the run's first steps' highest, and the loss's running median never rose
    over `loss_spike_recover_factor` x its level before the storm. An unstable stretch lifts the grad_norm's
    level, or the loss, or both."""
    if finding.severity != "warning" or not finding.evidence.get("storm") or loss is None:
        return finding
    grad = finite(grad)
    if _longest_spike(finding, grad) > _SHORT:  # a jump that stays up is a changed run, not one batch
        return finding
    levels = _levels_under_the_storm(finding, grad, loss, thresholds)
    first_steps = float(grad.iloc[:max(3, len(grad) // 10)].max())
    if levels is None or finding.evidence.get("peak", np.inf) > _STORM_RANGE * first_steps:
        return finding
    during, before, points = levels
    note = (f"; spread over {points} logged points, none taller than {format_number(_STORM_RANGE)}x the "
            f"run's first steps' highest ({format_number(first_steps)}), the grad_norm's median no higher than before "
            f"({format_number(during)} against {format_number(before)}) and "
            "the loss's running median never above its level before: the heavy tail of a steady run's grad_norm")
    return _as_info(finding, note, loss_reacted=False, steady_storm=True)


def _levels_under_the_storm(finding: Finding, grad: pd.Series, loss: pd.Series,
                            thresholds: Thresholds) -> tuple[float, float, int] | None:
    """(the grad_norm's median over the storm's stretch, its median over the `spike_window` points before, the
    stretch's points) where the storm left the run's levels where they were: that median no higher than before,
    and the loss's running median (over `spike_window` points) never over `loss_spike_recover_factor` x its median
    before; None where either rose, or where too few points come before it or under it to tell."""
    end = finding.end_step if finding.end_step is not None else int(grad.index[-1])
    window = thresholds.spike_window
    grad_before, grad_during = grad[grad.index < finding.step].iloc[-window:], grad[
        (grad.index >= finding.step) & (grad.index <= end)]
    loss_before = loss[loss.index < finding.step].iloc[-window:]
    loss_during = loss[(loss.index >= finding.step) & (loss.index <= end)]
    if len(grad_before) < thresholds.spike_min_history or len(loss_before) < thresholds.spike_min_history \
            or len(loss_during) < window:
        return None
    level = float(loss_before.median())
    lifted = float(loss_during.rolling(window).median().max()) > thresholds.loss_spike_recover_factor * level
    if float(grad_during.median()) > float(grad_before.median()) or lifted:
        return None
    return float(grad_during.median()), float(grad_before.median()), len(grad_during)


_MOST_OF_THE_RUN = 0.5  # a storm over this share of the logged grad_norm or more recurs through the run


def _unless_heavy_tail_under_a_falling_eval(finding: Finding, loss: pd.Series | None, grad: pd.Series,
                                            evals: pd.Series | None, thresholds: Thresholds) -> Finding:
    """A storm of spikes that recur through the run (its stretch `_MOST_OF_THE_RUN` of the logged points or more),
    under which the run's levels stayed where they were (`_levels_under_the_storm`) and the held-out loss kept
    falling (its last value under its last before the storm, its best in the storm's second half or later), is the
    heavy tail of a run that learns, however tall its norms (VERDICTS.md): single hard batches whose gradient the
    optimizer clips (a LoRA on batches of 2 with max_grad_norm 1.0: norms of 400-2092 at 24 of 135 points, the eval
    loss 2.67 -> 0.53 through them). Info. Without a held-out loss a storm this tall stays a warning, and so does
    one whose spikes stay up `_STAYS_UP` points in a row, at the end of the log too (a changed run, not single
    batches; a heavy tail's last spike may simply be near the end, so 'back to normal' is not asked), and one whose
    spikes came with loss jumps at half of them or more (`_loss_jumps_at_the_spikes`: the model lost what it knew at
    each, however well the eval ends)."""
    if finding.severity != "warning" or not finding.evidence.get("storm") or loss is None or evals is None:
        return finding
    grad, evals = finite(grad), finite(evals)
    spikes = len(finding.evidence.get("spike_steps", []))
    if _longest_spike(finding, grad) >= _STAYS_UP or 2 * _loss_jumps_at_the_spikes(finding, loss, thresholds) >= spikes:
        return finding
    end = finding.end_step if finding.end_step is not None else int(grad.index[-1])
    stretch = grad[(grad.index >= finding.step) & (grad.index <= end)]
    levels = _levels_under_the_storm(finding, grad, loss, thresholds)
    if levels is None or len(stretch) < _MOST_OF_THE_RUN * len(grad) or evals.empty:
        return finding
    before = evals[evals.index <= finding.step]
    start = float(before.iloc[-1]) if len(before) else float(evals.iloc[0])
    best_step = int(evals.idxmin())
    if float(evals.iloc[-1]) >= start or best_step < (finding.step + end) / 2:
        return finding
    during, before_storm, _ = levels
    note = (f"; spread over {len(stretch)} of {len(grad)} logged points, the grad_norm's median no higher than before "
            f"({format_number(during)} against {format_number(before_storm)}), the loss's running median never above "
            f"its level before and the eval loss falling through it ({format_number(start)} -> "
            f"{format_number(float(evals.iloc[-1]))}, its best {format_number(float(evals.min()))} "
            f"at step {best_step}): "
            "the heavy tail of a run that learns, single hard batches with no loss spike at them")
    return _as_info(finding, note, loss_reacted=False, heavy_tail=True)


def _loss_jumps_at_the_spikes(finding: Finding, loss: pd.Series, thresholds: Thresholds) -> int:
    """At how many of a storm's spikes the loss jumped with the grad_norm: its value at the spike's step (or the
    first logged after it), or at the next logged point (a logged loss is the interval's mean and a logged grad_norm
    its last step's, so a bad update shows in the next one), `loss_spike_factor` x over the median of the `_SHORT`
    points on either side of those two. A hard batch lifts the loss a little where its gradient is large (a LoRA on
    batches of 2: 1.6x its neighbours' median at its grad_norm spikes); an update that threw the model off lifts it a
    loss spike's height."""
    values, steps = loss.to_numpy(dtype="float64"), loss.index
    jumps = 0
    for step in finding.evidence.get("spike_steps", []):
        at = int(steps.searchsorted(step))
        neighbours = np.concatenate([values[max(0, at - _SHORT):at], values[at + 2:at + 2 + _SHORT]])
        if at < len(values) and len(neighbours) \
                and float(np.max(values[at:at + 2])) > thresholds.loss_spike_factor * float(np.median(neighbours)):
            jumps += 1
    return jumps


def _unless_reward_steady(finding: Finding, grad: pd.Series, reward: pd.Series, thresholds: Thresholds) -> Finding:
    """In GRPO/PPO the recent grad_norm median swings with how many groups had any reward spread (none: no
    gradient at all), so a spike is measured against the run's own median grad_norm instead; under
    `spike_quiet_loss_factor` x that, with the reward not falling through it, it is info."""
    if finding.severity != "warning" or len(reward) < thresholds.spike_min_history \
            or _longest_high_stretch(finding, grad) > _STAYS_UP:  # one that stays up is not a swing
        return finding
    level = float(grad.median())
    peak = float(finding.evidence.get("peak", float("inf")))
    end = finding.end_step if finding.end_step is not None else finding.step
    before = reward[reward.index < finding.step].iloc[-thresholds.spike_window:]
    after = reward[(reward.index >= finding.step) & (reward.index <= end)].iloc[:thresholds.spike_window]
    after = after if len(after) >= 3 else reward[reward.index >= finding.step].iloc[:3]
    if not level > 0 or peak >= thresholds.spike_quiet_loss_factor * level or len(before) < 3 or after.empty:
        return finding
    drop = float(before.median()) - float(after.median())
    if drop > 3 * point_noise(reward) / np.sqrt(len(after)):
        return finding
    note = (f"; {format_number(peak / level)}x the run's median grad_norm {format_number(level)}, and the reward did "
            f"not fall (about {format_number(float(after.median()))} against {format_number(float(before.median()))} "
            "before): in an RL run the grad_norm swings with how many groups had any reward spread")
    return _as_info(finding, note, reward_reacted=False)


_OWN_LEVEL = 2.0  # a peak within this x the run's median grad_norm is the run's own level
_LOW_SHARE = 0.2  # ... and the low level back at this share of the later points (two at least): two levels


def _unless_low_start_of_a_two_level_series(finding: Finding, grad: pd.Series, thresholds: Thresholds) -> Finding:
    """An early "spike" (fewer than `spike_min_history` points before it) judged against a first point or two that
    were low, in a grad_norm that moves between two levels the whole run: the peak within `_OWN_LEVEL` x the
    run's median, and the low level back later (within `_OWN_LEVEL` x the baseline, at `_LOW_SHARE` of the points
    after it). LIU-Hao's TRL GRPO:
    0.00018 at step 10, then 0.206, 0.215, 1.7e-05, 0.186, ...: the low points are steps with next to no
    gradient, not a level the run left. Info, not a warning."""
    position = finding.evidence.get("position", thresholds.spike_min_history)
    baseline, peak = finding.evidence.get("baseline", 0.0), finding.evidence.get("peak", float("inf"))
    values = finite(grad).to_numpy(dtype="float64")
    if finding.severity == "info" or position >= thresholds.spike_min_history or not baseline > 0:
        return finding
    level = float(np.median(values))
    later = values[position + 1:]
    back_low = int(np.sum(later <= _OWN_LEVEL * baseline))
    if peak > _OWN_LEVEL * level or back_low < max(2, _LOW_SHARE * len(later)):
        return finding
    note = (f"; but the run's median grad_norm is {format_number(level)} and it comes back to about "
            f"{format_number(baseline)} later: a grad_norm that moves between two levels from its start (steps with "
            "next to no gradient among ordinary ones), not a spike")
    return _as_info(finding, note, two_levels=True)


_START_UP = 2  # the first points of a run: a baseline of these alone says nothing of its level
_STEEP_FALL = 0.1  # a loss this share or more under its first point by a start-up jump's end is still falling steeply


def _unless_start_up_transient(finding: Finding, grad: pd.Series, loss: pd.Series | None,
                               thresholds: Thresholds) -> Finding:
    """An early "spike" (`_START_UP` points or fewer before it, so its baseline is the run's very first point or
    two) through which the loss keeps falling steeply from its first point (never above its last point before the
    jump, and `_STEEP_FALL` of the first or more lower by the jump's end), the grad_norm back far below the jump after
    it (the median of the points after its end under its peak over `spike_factor`): the first updates of a run that
    starts to learn
    (a model from random weights: 0.43 at step 0, 11.03 at step 1, 2-7 for twenty steps while the loss falls from
    11.09 to 6.79), not a spike against a level the run had. A jump at which the loss rises stays (a LoRA's 406 at
    its fifth logged point, the loss 0.66 -> 0.87 there), and so does a jump after three points or more: they are
    a level to judge it by (with the run's later points, `spikes`)."""
    position = finding.evidence.get("position", thresholds.spike_min_history)
    if finding.severity != "warning" or loss is None or position > _START_UP:
        return finding
    grad, loss = finite(grad), finite(loss)
    end = finding.end_step if finding.end_step is not None else int(grad.index[-1])
    before = loss[loss.index < finding.step]
    during = loss[(loss.index >= finding.step) & (loss.index <= end)]
    later = grad[grad.index > end]
    if before.empty or during.empty or len(later) < thresholds.spike_min_history:
        return finding
    start, peak = float(before.iloc[0]), float(finding.evidence.get("peak", np.inf))
    if not start > 0 or float(during.max()) > float(before.iloc[-1]) \
            or float(during.iloc[-1]) > (1 - _STEEP_FALL) * start \
            or float(later.median()) * thresholds.spike_factor > peak:
        return finding
    note = (f"; the loss falls from {format_number(start)} to {format_number(float(during.iloc[-1]))} through it and "
            f"the grad_norm settles at about {format_number(float(later.median()))} after: the first updates of a run "
            "starting to learn, no level before it to spike from")
    return _as_info(finding, note, start_up=True)


_STORM_RANGE = 1.5  # a storm's spikes no taller than this x the highest grad_norm of the run's first tenth


def _longest_spike(finding: Finding, grad: pd.Series) -> int:
    """The most consecutive logged points that any one spike of a storm stays above half its own height over the
    baseline, from its step on."""
    baseline = finding.evidence.get("baseline", 0.0)
    values, steps = grad.to_numpy(), grad.index
    longest = 0
    for step in finding.evidence.get("spike_steps", [finding.step]):
        at = int(steps.searchsorted(step))
        if at >= len(values):
            continue
        bar = baseline + 0.5 * (values[at] - baseline)
        stays = np.flatnonzero(values[at:] <= bar)
        longest = max(longest, int(stays[0]) if len(stays) else len(values) - at)
    return longest


_EARLY_RANGE = 3.0  # a spike within this x the run's early grad_norm is its ordinary range ...
_SHRUNK = 10.0  # ... when its median has fallen this many times since (or in a preference run)


def _unless_within_early_range(finding: Finding, grad: pd.Series, loss: pd.Series | None, preference: bool) -> Finding:
    """A grad_norm median that fell many-fold since the run's first steps (a DPO sigmoid saturating as the
    pairs are learned, a training set learned by heart) makes any batch that still has something to learn
    (a pair ranked wrong, an example not yet memorized) look like a spike against it, though it is no larger
    than the run's first steps. Such spikes, short (`_STAYS_UP` points at most above half their peak) with the
    loss under where it started through them (one hard batch may lift it for a point or three, not longer),
    are info; one that stays up, or sets the loss back to its start, stays a warning."""
    if finding.severity != "warning" or loss is None or len(loss) < 10:
        return finding
    grad = finite(grad)
    if _longest_high_stretch(finding, grad) > _STAYS_UP:
        return finding
    early = float(grad.iloc[:max(3, len(grad) // 10)].median())
    if not preference and not finding.evidence.get("baseline", early) * _SHRUNK <= early:
        return finding
    end = finding.end_step if finding.end_step is not None else finding.step
    during = loss[(loss.index >= finding.step) & (loss.index <= end)]
    after = loss[loss.index >= finding.step].iloc[:len(during) + _SHORT + 2]  # and the points just after it
    start = float(loss.iloc[:3].median())
    if not early > 0 or finding.evidence.get("peak", float("inf")) > _EARLY_RANGE * early or during.empty \
            or float(during.median()) >= start or max((b - a for a, b in true_runs(after >= start)), default=0) > _SHORT:
        return finding
    what = "pairs the policy still ranks wrong" if preference else "examples not yet learned"
    note = (f"; no larger than {format_number(_EARLY_RANGE)}x the run's early grad_norm ({format_number(early)}) "
            f"while the loss stays under where it started: single batches of {what}, against a median that "
            "fell as the rest was learned")
    return _as_info(finding, note, within_early_range=True)


_SHORT = 3  # a hard batch lifts the loss for a point or three, not longer
_STAYS_UP = 10  # grad_norm above half its peak this many points in a row is a changed run, not single batches


def _longest_high_stretch(finding: Finding, grad: pd.Series) -> int:
    """The most consecutive logged points above the spike threshold (half the peak's excess over the baseline)
    from the finding's first step to its end (to the end of the log when it never came back)."""
    end = finding.end_step if finding.end_step is not None else grad.index[-1]
    span = grad[(grad.index >= finding.step) & (grad.index <= end)].to_numpy()
    baseline, peak = finding.evidence.get("baseline", 0.0), finding.evidence.get("peak", 0.0)
    runs = true_runs(span > baseline + 0.5 * (peak - baseline))
    return max((b - a for a, b in runs), default=0)


_AGAINST_TREND = 4.0  # a rise over the last loss before the spike of this many of its point-to-point noise


def _rose_against_its_trend(before: pd.Series, during: pd.Series, min_rise: float) -> bool:
    """Whether the loss at the jump (its first point and the `_SHORT` after it) rose over the last loss before it by
    `_AGAINST_TREND` x its own point noise, and by `min_rise` nats, while it was falling: a reaction a median of the
    window before hides when the loss is still coming down fast (elena-lyulina's Megatron pre-training in its
    warm-up: 7.67 -> 7.91 at a 43x grad_norm spike, against a median of 8.57 over the twenty iterations before,
    falling 0.08 an iteration). Read at the jump, not over a long storm, whose largest loss is one batch's."""
    values = before.to_numpy(dtype="float64")
    falling = len(values) >= 3 and values[-1] < values[0]
    rise = float(during.iloc[:1 + _SHORT].max()) - float(values[-1])
    return falling and rise > _AGAINST_TREND * point_noise(values) and rise >= min_rise


def _loss_rose(before: pd.Series, during: pd.Series, thresholds: Thresholds) -> bool:
    """Whether the loss's median over the spike's stretch stood over its median before by `loss_spike_recover_factor`
    x and by `loss_spike_min_rise` nats. The median, not the largest loss: over a storm spread across a hundred
    per-step points the largest is one batch's value, the tail of the loss's own noise, which grows with the stretch
    (a LoRA SFT on batches of 8: 1.21 against a median of 0.47 over 190 steps whose median stayed at 0.52); for a
    lone spike the median is the loss at the spike itself. The nats, because a ratio near zero is no reaction: a loss
    at 0.012 touching 0.0198 at a spike is 1.6x its level and nothing the model lost (a QLoRA SFT memorizing its
    data, 0.0038 at the next point)."""
    level = float(before.median())
    # a stretch of a few points is read at its worst: the median of three hides a jump at the first of them
    reaction = float(during.median()) if len(during) > _FEW_POINTS else float(during.max())
    return reaction > thresholds.loss_spike_recover_factor * level \
        and reaction - level >= _least_rise(before, thresholds)


_FEW_POINTS = 5  # a spike's stretch this short is read at its highest loss, a longer one at its median
_NOISES = 6.0  # a rise of this many of the loss's own point noise is a reaction, however few nats


def _least_rise(before: pd.Series, thresholds: Thresholds) -> float:
    """The least rise, in nats, that counts as the loss reacting: `loss_spike_min_rise`, or `_NOISES` x the loss's
    own point noise where that is less (a loss at 0.30 with 0.005 of noise jumping to 0.39 reacted; one at 0.012
    with 0.0036 of noise touching 0.0198 did not)."""
    return min(thresholds.loss_spike_min_rise, _NOISES * point_noise(before.to_numpy(dtype="float64")))


def _isolated_points(finding: Finding, grad: pd.Series, thresholds: Thresholds) -> bool:
    """Whether the points of the finding's stretch (to the log's end when it never came back) that stand
    `spike_factor` over its baseline come as lone jumps (a jump and at most its echo), each back under it
    within `_LONE` logged points, none taller than `_TAIL` x the run's own early range: the heavy tail of
    its gradient, not a blow-up."""
    end = finding.end_step if finding.end_step is not None else grad.index[-1]
    span = grad[(grad.index >= finding.step) & (grad.index <= end)].to_numpy()
    high = span > thresholds.spike_factor * finding.evidence.get("baseline", 0.0)
    first_steps = float(grad.iloc[:max(3, len(grad) // 10)].max())
    within_tail = finding.evidence.get("peak", float("inf")) <= _TAIL * first_steps
    return within_tail and bool(high.any()) and max((b - a for a, b in true_runs(high)), default=0) <= _LONE


_LONE = 2
_TAIL = 15.0  # ... and no taller than this x the highest grad_norm of the run's first tenth (its own range)


def _grad_level_lifted(finding: Finding, grad: pd.Series, thresholds: Thresholds) -> bool:
    """Whether the grad_norm's median over the finding's stretch stood over `spike_recover_factor` x its median over
    the `spike_window` points before: lone jumps on a level that itself rose (a level the spikes' episodes would
    not count as back to normal) are a changed run, whatever the loss did (a per-step log whose grad_norm triples
    under a storm). A steady run's storm leaves its level where it was (a LoRA SFT on batches of 8: 8.1 over 192
    steps of lone jumps to 815.6 against 7.2 before)."""
    end = finding.end_step if finding.end_step is not None else finding.step
    before = grad[grad.index < finding.step].iloc[-thresholds.spike_window:]
    during = grad[(grad.index >= finding.step) & (grad.index <= end)]
    if len(before) < thresholds.spike_min_history or len(during) < thresholds.spike_window:
        return False  # a lone jump's own points are no level
    return float(during.median()) > thresholds.spike_recover_factor * float(before.median())


def _unless_loss_steady(finding: Finding, loss: pd.Series | None, grad: pd.Series, thresholds: Thresholds) -> Finding:
    """A grad_norm spike that recovered while the loss did not react at all is the heavy tail of a
    healthy run's grad_norm (VERDICTS.md), shown as info rather than a warning. The reaction is read from the
    loss's median over the spike's stretch (`_loss_rose`) and from its jump at the spike against a falling trend
    (`_rose_against_its_trend`), each in nats as well as relative."""
    if finding.severity != "warning" or loss is None:
        return finding
    # single-point jumps, each gone at the next logged point, are the heavy tail however tall (clipping caps
    # the update); a spike that stays up, or is that tall over several points, is worth a look whatever the loss
    if not _isolated_points(finding, grad, thresholds) and (
            not finding.evidence.get("recovered", True)
            or finding.evidence.get("factor", float("inf")) >= thresholds.spike_quiet_loss_factor):
        return finding
    if _grad_level_lifted(finding, finite(grad), thresholds):
        return finding
    end = finding.end_step if finding.end_step is not None else finding.step
    before = loss[loss.index < finding.step].iloc[-thresholds.spike_window:]
    during = loss[(loss.index >= finding.step) & (loss.index <= end)]
    if len(before) < thresholds.spike_min_history or during.empty:
        return finding
    if _loss_rose(before, during, thresholds) \
            or _rose_against_its_trend(before, during, _least_rise(before, thresholds)):
        return finding
    over = "at it" if len(during) == 1 else f"its median over {len(during)} points"
    note = (f"; the loss did not react ({format_number(float(during.median()))} {over}, against a recent median of "
            f"{format_number(float(before.median()))}): the heavy tail of a steady run's grad_norm")
    return _as_info(finding, note, loss_reacted=False)
