"""Whether a grad_norm spike is the heavy tail of a steady run's gradient rather than an incident: the loss did not
react to it (`unless_loss_steady`: a lone spike, or lone jumps each gone at the next point), or a storm of spikes left
the run's levels where they were (`unless_storm_in_a_steady_run`, and `unless_heavy_tail_under_a_falling_eval`
where it recurs through the run while the eval loss keeps falling). Each makes the `grad_norm_spike` warning info
(VERDICTS.md: the heavy tail of a healthy run's grad_norm is no incident); `grad_spike` applies them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import finite, format_number, point_noise, true_runs
from .spike_findings import as_info

SHORT = 3  # a hard batch lifts the loss for a point or three, not longer
STAYS_UP = 10  # grad_norm above half its peak this many points in a row is a changed run, not single batches


def unless_storm_in_a_steady_run(finding: Finding, loss: pd.Series | None, grad: pd.Series,
                                  thresholds: Thresholds) -> Finding:
    """A storm of spikes spread over a long stretch of a per-step log on tiny batches (a spike every few dozen
    points, against a median that fell as the run learned) is the heavy tail of a steady run's gradient when
    each jump is short (`SHORT` points at most above half its height) and the run did not change under it: the
    grad_norm's median over the stretch is no higher than before it, no spike is taller than `_STORM_RANGE` x the run's
    first steps' highest, and the loss's running median never rose over `loss_spike_recover_factor` x its level before
    the storm. An unstable stretch lifts the grad_norm's level, or the loss, or both."""
    if finding.severity != "warning" or not finding.evidence.get("storm") or loss is None:
        return finding
    grad = finite(grad)
    if _longest_spike(finding, grad) > SHORT:  # a jump that stays up is a changed run, not one batch
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
    return as_info(finding, note, loss_reacted=False, steady_storm=True)


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


def unless_heavy_tail_under_a_falling_eval(finding: Finding, loss: pd.Series | None, grad: pd.Series,
                                            evals: pd.Series | None, thresholds: Thresholds) -> Finding:
    """A storm of spikes that recur through the run (its stretch `_MOST_OF_THE_RUN` of the logged points or more),
    under which the run's levels stayed where they were (`_levels_under_the_storm`) and the held-out loss kept
    falling (its last value under its last before the storm, its best in the storm's second half or later), is the
    heavy tail of a run that learns, however tall its norms (VERDICTS.md): single hard batches whose gradient the
    optimizer clips (a LoRA on batches of 2 with max_grad_norm 1.0: norms of 400-2092 at 24 of 135 points, the eval
    loss 2.67 -> 0.53 through them). Info. Without a held-out loss a storm this tall stays a warning, and so does
    one whose spikes stay up `STAYS_UP` points in a row, at the end of the log too (a changed run, not single
    batches; a heavy tail's last spike may simply be near the end, so 'back to normal' is not asked), and one whose
    spikes came with loss jumps at half of them or more (`_loss_jumps_at_the_spikes`: the model lost what it knew at
    each, however well the eval ends)."""
    if finding.severity != "warning" or not finding.evidence.get("storm") or loss is None or evals is None:
        return finding
    grad, evals = finite(grad), finite(evals)
    spikes = len(finding.evidence.get("spike_steps", []))
    if _longest_spike(finding, grad) >= STAYS_UP or 2 * _loss_jumps_at_the_spikes(finding, loss, thresholds) >= spikes:
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
    return as_info(finding, note, loss_reacted=False, heavy_tail=True)


def _loss_jumps_at_the_spikes(finding: Finding, loss: pd.Series, thresholds: Thresholds) -> int:
    """At how many of a storm's spikes the loss jumped with the grad_norm: its value at the spike's step (or the
    first logged after it), or at the next logged point (a logged loss is the interval's mean and a logged grad_norm
    its last step's, so a bad update shows in the next one), `loss_spike_factor` x over the median of the `SHORT`
    points on either side of those two. A hard batch lifts the loss a little where its gradient is large (a LoRA on
    batches of 2: 1.6x its neighbours' median at its grad_norm spikes); an update that threw the model off lifts it a
    loss spike's height."""
    values, steps = loss.to_numpy(dtype="float64"), loss.index
    jumps = 0
    for step in finding.evidence.get("spike_steps", []):
        at = int(steps.searchsorted(step))
        neighbours = np.concatenate([values[max(0, at - SHORT):at], values[at + 2:at + 2 + SHORT]])
        if at < len(values) and len(neighbours) \
                and float(np.max(values[at:at + 2])) > thresholds.loss_spike_factor * float(np.median(neighbours)):
            jumps += 1
    return jumps


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


_AGAINST_TREND = 4.0  # a rise over the last loss before the spike of this many of its point-to-point noise


def _rose_against_its_trend(before: pd.Series, during: pd.Series, min_rise: float) -> bool:
    """Whether the loss at the jump (its first point and the `SHORT` after it) rose over the last loss before it by
    `_AGAINST_TREND` x its own point noise, and by `min_rise` nats, while it was falling: a reaction a median of the
    window before hides when the loss is still coming down fast (elena-lyulina's Megatron pre-training in its
    warm-up: 7.67 -> 7.91 at a 43x grad_norm spike, against a median of 8.57 over the twenty iterations before,
    falling 0.08 an iteration). Read at the jump, not over a long storm, whose largest loss is one batch's."""
    values = before.to_numpy(dtype="float64")
    falling = len(values) >= 3 and values[-1] < values[0]
    rise = float(during.iloc[:1 + SHORT].max()) - float(values[-1])
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


def unless_loss_steady(finding: Finding, loss: pd.Series | None, grad: pd.Series, thresholds: Thresholds) -> Finding:
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
    return as_info(finding, note, loss_reacted=False)
