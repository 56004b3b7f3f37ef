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
`chain`, which also records it as their cause. The rules for the heavy tail (the loss did not react, a storm under
which the run's levels held) are `heavy_tail`'s; the rules for a run's first points and an RL run's are here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import (GRAD_NORM, LOSS, Metrics, finite, format_number, is_preference_log, point_noise, real_loss,
                      true_runs)
from .dead_reward import no_spread_points
from .overfitting import EVAL_LOSS
from .reward_decline import reward_metric
from .heavy_tail import (STAYS_UP, SHORT, unless_heavy_tail_under_a_falling_eval, unless_loss_steady,
                         unless_storm_in_a_steady_run)
from .spike_findings import as_info, spike_findings
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
    findings = [unless_storm_in_a_steady_run(f, loss, grad, thresholds) for f in findings]
    findings = [unless_heavy_tail_under_a_falling_eval(f, loss, grad, metrics.get(EVAL_LOSS), thresholds)
                for f in findings]
    return [unless_loss_steady(f, loss, grad, thresholds) for f in findings]


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


def _unless_reward_steady(finding: Finding, grad: pd.Series, reward: pd.Series, thresholds: Thresholds) -> Finding:
    """In GRPO/PPO the recent grad_norm median swings with how many groups had any reward spread (none: no
    gradient at all), so a spike is measured against the run's own median grad_norm instead; under
    `spike_quiet_loss_factor` x that, with the reward not falling through it, it is info."""
    if finding.severity != "warning" or len(reward) < thresholds.spike_min_history \
            or _longest_high_stretch(finding, grad) > STAYS_UP:  # one that stays up is not a swing
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
    return as_info(finding, note, reward_reacted=False)


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
    return as_info(finding, note, two_levels=True)


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
    return as_info(finding, note, start_up=True)


_EARLY_RANGE = 3.0  # a spike within this x the run's early grad_norm is its ordinary range ...
_SHRUNK = 10.0  # ... when its median has fallen this many times since (or in a preference run)


def _unless_within_early_range(finding: Finding, grad: pd.Series, loss: pd.Series | None, preference: bool) -> Finding:
    """A grad_norm median that fell many-fold since the run's first steps (a DPO sigmoid saturating as the
    pairs are learned, a training set learned by heart) makes any batch that still has something to learn
    (a pair ranked wrong, an example not yet memorized) look like a spike against it, though it is no larger
    than the run's first steps. Such spikes, short (`STAYS_UP` points at most above half their peak) with the
    loss under where it started through them (one hard batch may lift it for a point or three, not longer),
    are info; one that stays up, or sets the loss back to its start, stays a warning."""
    if finding.severity != "warning" or loss is None or len(loss) < 10:
        return finding
    grad = finite(grad)
    if _longest_high_stretch(finding, grad) > STAYS_UP:
        return finding
    early = float(grad.iloc[:max(3, len(grad) // 10)].median())
    if not preference and not finding.evidence.get("baseline", early) * _SHRUNK <= early:
        return finding
    end = finding.end_step if finding.end_step is not None else finding.step
    during = loss[(loss.index >= finding.step) & (loss.index <= end)]
    after = loss[loss.index >= finding.step].iloc[:len(during) + SHORT + 2]  # and the points just after it
    start = float(loss.iloc[:3].median())
    if not early > 0 or finding.evidence.get("peak", float("inf")) > _EARLY_RANGE * early or during.empty \
            or float(during.median()) >= start or max((b - a for a, b in true_runs(after >= start)), default=0) > SHORT:
        return finding
    what = "pairs the policy still ranks wrong" if preference else "examples not yet learned"
    note = (f"; no larger than {format_number(_EARLY_RANGE)}x the run's early grad_norm ({format_number(early)}) "
            f"while the loss stays under where it started: single batches of {what}, against a median that "
            "fell as the rest was learned")
    return as_info(finding, note, within_early_range=True)


def _longest_high_stretch(finding: Finding, grad: pd.Series) -> int:
    """The most consecutive logged points above the spike threshold (half the peak's excess over the baseline)
    from the finding's first step to its end (to the end of the log when it never came back)."""
    end = finding.end_step if finding.end_step is not None else grad.index[-1]
    span = grad[(grad.index >= finding.step) & (grad.index <= end)].to_numpy()
    baseline, peak = finding.evidence.get("baseline", 0.0), finding.evidence.get("peak", 0.0)
    runs = true_runs(span > baseline + 0.5 * (peak - baseline))
    return max((b - a for a, b in runs), default=0)


