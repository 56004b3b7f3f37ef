"""Learning-rate anomalies: a rate that leaps above anything its schedule reached, or sits at 0.

A schedule warms up, holds, decays, maybe restarts -- but never to more than its own peak.
A logged rate more than `lr_jump_factor` times the highest rate logged before it is a jump
outside the schedule (a resume with another rate, a misread config: 0.0028 -> 5.0), unless
every rate so far rose step by step: that is the warm-up ramp, logged sparsely. A rate of
exactly 0 for at least `lr_zero_points` logged points (and at least a tenth of the log) in the
middle of the run means no update was made there; so does such a stretch at the log's start (at least a fifth of it)
after which the rate is at once at its level: a warm-up ramp is 0 at its first step only. A rate that ran down to about
0 and then climbs back point after point is a schedule whose horizon is shorter than the run; one back at its peak at
once in the middle of its decay is a scheduler that started over (a resume without the scheduler's state), unless the
run's configuration names a scheduler that starts over by design (`planned_restarts`). All are warnings: the
owner should know, and a jump is also where a divergence that follows it started.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .lr_drop import falls_at_once
from .metrics import LR, Metrics, finite, format_number, format_rate, true_runs


def detect_lr_anomalies(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`lr_anomaly` warnings: jumps above the schedule's own peak, long stretches at 0, a schedule that climbs
    back or starts over (after it ran out, in the middle of its decay, or with its warm-up again), and one that falls
    by more than half at once in the middle of a smooth decay (lr_drop.py)."""
    lr = metrics.get(LR)
    if lr is None:
        return []
    lr = finite(lr)
    return (_jumps(lr, thresholds) + _zero_stretches(lr, thresholds) + _climbs_after_its_end(lr, thresholds)
            + _starts_over_after_its_end(lr) + _starts_over_mid_decay(lr) + _starts_over_with_its_warmup(lr)
            + falls_at_once(lr))


def _cycled_before(values: np.ndarray, peak: float) -> bool:
    """Whether the rate had already run down to about 0 and come back up before: a schedule that cycles by design."""
    low = np.flatnonzero(values <= _ENDED * peak)
    return bool(len(low)) and bool(np.any(values[low[0]:] > _BACK_UP * peak)) and int(np.argmax(values)) < low[0]


_BACK_UP = 0.1  # a rate back at this share of the peak or more, the point after it ran out


def _starts_over_after_its_end(lr) -> list[Finding]:
    """A schedule that ran out (a rate of about 0 after its peak: a linear decay reaching 0 at max_steps) and is back
    up at the next logged point: the run went on past the end of its schedule, which started over (a resume with a
    larger max_steps, or train() called again on the same trainer; marthinsurya/lab2-ID2223 at steps 60 and 300).
    A warning at each such restart: maybe the plan, maybe not, and the steps after it trained at a rate the first
    schedule did not intend."""
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    if len(values) < 3:
        return []
    out, peaks = [], np.maximum.accumulate(values)
    for i in range(1, len(values) - 1):
        peak = float(peaks[i - 1])
        if peak > 0 and _ran_out(values, i, peak) and values[i + 1] >= _JUMPS_BACK * peak \
                and not _climbed_back_before(values[:i]):
            message = (f"learning rate ran out at step {int(steps[i])} ({format_rate(values[i])}, its schedule's end "
                       f"after a peak of {format_rate(peak)}) and is back at {format_rate(values[i + 1])} at step "
                       f"{int(steps[i + 1])}: the run went on past its schedule, which started over (a resume with a "
                       "larger max_steps, or train() called again). If that was the plan, nothing is wrong; if not, "
                       "the steps from here trained at a rate the first schedule did not intend.")
            out.append(Finding("lr_anomaly", "warning", int(steps[i + 1]), message, metric=LR, evidence={
                "ran_out_at": int(steps[i]), "peak": peak, "after": float(values[i + 1]), "started_over": True,
                "schedule_shape": True}))
    origin = int(steps[0]) - (int(steps[1]) - int(steps[0]))  # the step before the first logged one: the start
    every = float(np.median(np.diff(steps)))
    if _periodic([origin] + [f.evidence["ran_out_at"] for f in out], every):
        return []
    return _one_finding(out)


_BACK_AT_PEAK = 0.9  # a rate back at this share of its earlier peak or more, at once ...
_DECAYED = 0.95  # ... from a decay that had taken it this share of that peak or under ...
_EARLY_IN_DECAY = 0.5  # ... and no further than this share: a sparsely logged cosine cycle ends lower than this
_DECAY_POINTS = 3  # ... falling at each of this many logged points or more before the jump
_WAY_BACK = 0.75  # ... and the jump this share of the way back up to the peak or more, in one logged interval


def _starts_over_mid_decay(lr) -> list[Finding]:
    """A decaying schedule that is back at (nearly) its peak at once, at one logged point, before it ran out: the
    scheduler started over while the run went on (a resume that loaded the weights but not the scheduler's state, or
    train() called again), so every later step trains at the rate of an earlier one and the decay ends short of its
    planned end (a linear decay 1000 steps behind, 4.5e-6 at the last step instead of 0). Planned schedules do not do
    this: a warm restart follows a run-down to about 0 (`_starts_over_after_its_end`), a cycle climbs point after
    point, a new phase warms up. Needs the rate to have fallen at each of the `_DECAY_POINTS` points before the jump,
    never risen between its peak and the jump, and to be at least `_EARLY_IN_DECAY` of its peak there: the last point
    a sparse log shows of a cosine cycle with hard restarts (a few points a cycle) sits lower than that, while a
    resume's restart can come anywhere (one in the later half of a decay is not told from such a cycle and is left
    alone). A warning at the first such point, else []."""
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    for i in _jumps_back_near_the_peak(values):
        decay = _mid_decay(values[:i])
        if decay is None:
            continue
        peak_at, peak = decay
        now, prev = float(values[i]), float(values[i - 1])
        if now >= _BACK_AT_PEAK * peak and now - prev >= _WAY_BACK * (peak - prev):
            message = (f"learning rate is back at {format_rate(now)} at step {int(steps[i])}, at once, "
                       f"from {format_rate(prev)} at step {int(steps[i - 1])} on a decay from its peak of "
                       f"{format_rate(peak)} (step {int(steps[peak_at])}): the schedule started over in the middle "
                       "of its decay (a resume that loaded the weights but not the scheduler's state, or train() "
                       "called again), so the steps from here train at the rates of earlier ones and the decay ends "
                       "short of its planned end. If a new phase was meant, nothing is wrong; if not, resume with the "
                       "scheduler's state (the checkpoint's scheduler.pt).")
            return [Finding("lr_anomaly", "warning", int(steps[i]), message, metric=LR, evidence={
                "before": prev, "after": now, "peak": peak, "started_over": True,
                "schedule_shape": True})]
    return []


def _jumps_back_near_the_peak(values: np.ndarray) -> np.ndarray:
    """The positions where the rate is back at once near the peak before it (`_BACK_AT_PEAK` of it, `_WAY_BACK` of the
    way up) from a point `_EARLY_IN_DECAY` to `_DECAYED` of it: the only points `_starts_over_mid_decay` looks at
    closer (found in one pass: a log of every step has hundreds of thousands of points)."""
    if len(values) <= _DECAY_POINTS + 1:
        return np.zeros(0, dtype="int64")
    peak, prev, now = np.maximum.accumulate(values)[:-1], values[:-1], values[1:]
    near = (peak > 0) & (prev >= _EARLY_IN_DECAY * peak) & (prev <= _DECAYED * peak) & (now >= _BACK_AT_PEAK * peak) \
        & (now - prev >= _WAY_BACK * (peak - prev))
    found = np.flatnonzero(near) + 1
    return found[found >= _DECAY_POINTS + 1]


def _mid_decay(before: np.ndarray) -> tuple[int, float] | None:
    """(where, the peak) when `before` ends on a decay from its peak: falling at each of its last `_DECAY_POINTS`
    points, never rising since the peak, and between `_EARLY_IN_DECAY` and `_DECAYED` of it; else None."""
    peak_at = int(np.argmax(before))
    peak, prev = float(before[peak_at]), float(before[-1])
    falling = np.diff(before[-(_DECAY_POINTS + 1):]) < 0
    if peak <= 0 or len(before) <= _DECAY_POINTS or not falling.all() or np.any(np.diff(before[peak_at:]) > 0):
        return None
    return (peak_at, peak) if _EARLY_IN_DECAY * peak <= prev <= _DECAYED * peak else None


_REWARM_FLOOR = 0.25  # a rate in the middle of its decay that falls under this share of its peak in one interval ...
_REWARM_POINTS = 2  # ... then rises at each of this many logged points or more, back to `_BACK_AT_PEAK` of the peak


def _starts_over_with_its_warmup(lr) -> list[Finding]:
    """A decaying schedule that falls at once, from half its peak or more to under `_REWARM_FLOOR` of it, and climbs
    back point after point to (nearly) its peak: the scheduler started over with its warm-up in the middle of its
    decay (a resume that loaded the weights but not the scheduler's state, of a schedule that warms up). A decay
    takes a few percent of the peak a point, not half of it. Restarts at even intervals from the log's start are a
    plan (a warm-up each stage or epoch: `_periodic`); a single one is told as it is, a warning at the fall."""
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    restarts, segment = [], 0
    # (only where the rate at least halves in one interval: a decay takes a few percent a point)
    for i in np.flatnonzero(values[1:] <= (_REWARM_FLOOR / _EARLY_IN_DECAY) * values[:-1]) + 1:
        if i < segment + _DECAY_POINTS + 1 or i >= len(values) - _REWARM_POINTS:
            continue
        decay = _mid_decay(values[segment:i])
        top = _climb_end(values, i)
        if decay is None or values[i] > _REWARM_FLOOR * decay[1] or top - i < _REWARM_POINTS \
                or values[top] < _BACK_AT_PEAK * decay[1]:
            continue
        restarts.append((i, segment + decay[0], decay[1], top))
        segment = i
    origin = int(steps[0]) - (int(steps[1]) - int(steps[0])) if len(steps) > 1 else 0
    if not restarts or _periodic([origin] + [int(steps[r[0]]) for r in restarts], float(np.median(np.diff(steps)))):
        return []
    i, peak_at, peak, top = restarts[0]
    message = (f"learning rate falls at once from {format_rate(values[i - 1])} (step {int(steps[i - 1])}, on a decay "
               f"from its peak of {format_rate(peak)} at step {int(steps[peak_at])}) to "
               f"{format_rate(values[i])} at step {int(steps[i])}, then climbs back to {format_rate(values[top])} "
               f"by step {int(steps[top])}: the schedule started over, warm-up and all, in the middle of its decay (a "
               "resume that loaded the weights but not the scheduler's state, or train() called again), so the steps "
               "from here train at the rates of earlier ones and the decay ends short of its planned end. If a new "
               "stage was meant, nothing is wrong; if not, resume with the scheduler's state (the checkpoint's "
               "scheduler.pt).")
    return [Finding("lr_anomaly", "warning", int(steps[i]), message, end_step=int(steps[top]), metric=LR, evidence={
        "before": float(values[i - 1]), "after": float(values[i]), "peak": peak, "back_at": float(values[top]),
        "started_over": True, "schedule_shape": True})]


def _climb_end(values: np.ndarray, i: int) -> int:
    """The last point of the climb that starts at point `i` (each point above the one before); `i` if none."""
    top = i
    while top + 1 < len(values) and values[top + 1] > values[top]:
        top += 1
    return top


def _one_finding(found: list[Finding]) -> list[Finding]:
    """Several restarts of one log told as one warning, from the first (each is the same matter: a schedule that ran
    out and started over); one or none as they are."""
    if len(found) <= 1:
        return found
    first = found[0]
    at = ", ".join(f"step {f.step}" for f in found)
    message = (f"learning rate ran out and started over {len(found)} times ({at}; first after step "
               f"{first.evidence['ran_out_at']}, {format_rate(first.evidence['after'])} after a peak of "
               f"{format_rate(first.evidence['peak'])}), not at even intervals: the run went on past its schedule "
               "each time (resumes with a larger max_steps, or train() called again). If that was the plan, nothing "
               "is wrong; if not, the steps after each restart trained at a rate the schedule before did not intend.")
    return [Finding("lr_anomaly", "warning", first.step, message, end_step=found[-1].step, metric=LR,
                    evidence={**first.evidence, "restarts": [f.step for f in found]})]


def _climbed_back_before(values: np.ndarray) -> bool:
    """Whether the rate had already come down and climbed back up point after point (`_CLIMB_POINTS` rises in a row
    from a low after a higher rate, to half that rate or more): a cyclic schedule (CyclicLR's triangle, a cosine with
    warm restarts logged sparsely), whose next low seen as 'ran out' is one more cycle, not the run going past its
    schedule's end (which starts over at once, not climbing)."""
    for j in range(1, len(values) - _CLIMB_POINTS):
        earlier = float(np.max(values[:j]))
        low = float(values[j])
        if earlier <= 0 or low >= values[j - 1] or low >= 0.5 * earlier:
            continue
        ahead = values[j:j + _CLIMB_POINTS + 1]
        if bool(np.all(np.diff(ahead) > 0)) and float(ahead[-1]) >= 0.5 * earlier:
            return True
    return False


_CLIMB_POINTS = 2
_JUMPS_BACK = 0.25  # ... back up at once to this share of the peak or more: a new schedule, not a cycle's climb
_LAST_STEP_DOWN = 0.2  # a decaying rate at most this share of its peak whose next step down would reach 0 ...


def _ran_out(values: np.ndarray, i: int, peak: float) -> bool:
    """Whether the rate at point `i` is its schedule's end: decaying into it, and about 0 (`_ENDED` of the peak), or,
    at most `_LAST_STEP_DOWN` of the peak, within one more step of the same decay of 0: a linear decay logged every
    10 steps shows its last rate before 0 at a tenth of its length's share of the peak (marthinsurya's
    lab2-ID2223, logged every 10 steps: 9e-5, 3e-5, then back at 2.4e-4 after a peak of 3e-4)."""
    before, now = float(values[i - 1]), float(values[i])
    if before <= now:
        return False
    return now <= _ENDED * peak or now <= _LAST_STEP_DOWN * peak and now <= before - now


def _periodic(starts: list[int], every: float) -> bool:
    """Restarts by design (cosine_with_restarts, SGDR, CyclicLR), not a run that went on past its schedule's end:
    two or more at even intervals from the log's start, or three or more whose intervals are each a whole multiple of
    the shortest (a sparse log misses the low of some cycles) or each a whole multiple of the one before (warm
    restarts with T_mult). A restart is seen at a logged point, so each interval is known to within two logging
    intervals (`every`) or a tenth of its length, whichever is more."""
    gaps = np.diff(np.asarray(starts, dtype="float64"))
    if len(gaps) < 2 or float(gaps.min()) <= 0:
        return False
    slack = max(0.1 * float(gaps.mean()), 2 * every)
    if float(gaps.max() - gaps.min()) <= slack:
        return True
    if len(gaps) < 3:
        return False
    base = float(gaps.min())
    times = np.maximum(np.round(gaps / base), 1)
    if bool(np.all(np.abs(gaps - times * base) <= slack * times)):
        return True
    ratio = np.maximum(np.round(gaps[1:] / gaps[:-1]), 1)
    return len(set(ratio.tolist())) == 1 and float(ratio[0]) >= 2 and bool(
        np.all(np.abs(gaps[1:] - ratio * gaps[:-1]) <= slack * ratio))

_ENDED = 0.01  # a rate at or under this share of its peak, after the peak: the schedule has run its course
_CLIMB = 10.0  # ... and climbing back this many times over that low, a point higher each time


def _climbs_after_its_end(lr, thresholds: Thresholds) -> list[Finding]:
    """A schedule that decayed to about 0 and then climbs back, point after point for `lr_zero_points` logged points
    or more, to `_CLIMB` x its low, and is still climbing when the log ends: a cosine whose horizon (T_max,
    num_training_steps) is shorter than the run goes round again (Sustella/qwen_sapiens: 9.67e-6 -> 7.09e-11 at step
    310 -> 2.55e-6 at 410, the log's end). A climb that peaks and falls again is a planned second phase, and a
    schedule that had run down and come back before cycles by design (CyclicLR, warm restarts): neither is one."""
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    if len(values) < 2 * thresholds.lr_zero_points:
        return []
    peak_at = int(np.argmax(values))
    low_at = peak_at + int(np.argmin(values[peak_at:]))
    low, peak = float(values[low_at]), float(values[peak_at])
    climb = values[low_at:]
    if not 0 < low <= _ENDED * peak or len(climb) <= thresholds.lr_zero_points:
        return []
    rising = np.diff(climb[:thresholds.lr_zero_points + 1]) > 0
    if not rising.all() or climb[thresholds.lr_zero_points] < _CLIMB * max(low, _ENDED * _ENDED * peak):
        return []
    if float(climb[-1]) < float(climb.max()) or _cycled_before(values[:low_at], peak):
        return []  # it peaks and falls again (a planned second phase), or the schedule cycles (CyclicLR, SGDR)
    start, last = int(steps[low_at + 1]), int(steps[-1])
    message = (f"learning rate climbs back after its schedule ran down: from {format_rate(peak)} (step "
               f"{int(steps[peak_at])}) to {format_rate(low)} at step {int(steps[low_at])}, then up again from step "
               f"{start} to {format_rate(float(values[-1]))} by step {last}. A cosine schedule whose horizon "
               "(T_max, num_training_steps) is shorter than the run goes round again like this; check the scheduler's "
               "total steps against the steps the run takes (epochs x steps per epoch), or whether a second phase "
               "was meant to start here.")
    return [Finding("lr_anomaly", "warning", start, message, end_step=last, metric=LR,
                    evidence={"peak": peak, "low": low, "low_step": int(steps[low_at]), "climbed_to": float(values[-1]),
                              "schedule_shape": True})]


def _jumps(lr, thresholds: Thresholds) -> list[Finding]:
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    if len(values) < 2:
        return []
    peak_before = np.maximum.accumulate(values)[:-1]
    ratio = np.divide(values[1:], peak_before, out=np.zeros(len(values) - 1), where=peak_before > 0)
    out = []
    for i in np.flatnonzero(ratio > thresholds.lr_jump_factor) + 1:
        if np.all(np.diff(values[:i + 1]) > 0):
            continue  # still the warm-up ramp from near 0 (1e-9 at step 1, 1e-8 at step 10): not a jump
        message = (f"learning rate jumps from {format_rate(values[i - 1])} to {format_rate(values[i])} at step "
                   f"{int(steps[i])}, {format_number(ratio[i - 1])}x the highest rate logged before: outside any "
                   "warm-up or schedule (a resume with another rate, or a misread setting?).")
        out.append(Finding("lr_anomaly", "warning", int(steps[i]), message, metric=LR,
                           evidence={"before": float(values[i - 1]), "after": float(values[i]),
                                     "peak_before": float(peak_before[i - 1]), "factor": float(ratio[i - 1])}))
    return out


def _zero_stretches(lr, thresholds: Thresholds) -> list[Finding]:
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    positive = np.flatnonzero(values > 0)
    if len(positive) == 0:
        return []
    out = []
    need = max(thresholds.lr_zero_points, len(values) // 10)
    for i, j in true_runs(values == 0):
        inside = positive[0] < i and j <= positive[-1]  # not the warm-up start, not the schedule's end
        if inside and j - i >= need:
            message = (f"learning rate is exactly 0 from step {int(steps[i])} to step {int(steps[j - 1])} "
                       f"({j - i} logged points) in the middle of the run: no update was made there.")
            out.append(Finding("lr_anomaly", "warning", int(steps[i]), message, end_step=int(steps[j - 1]),
                               metric=LR, evidence={"n_points": j - i}))
        elif i == 0 and j == positive[0] and j - i >= max(need, len(values) // _LEADING_SHARE) \
                and _straight_to_its_level(values[j:]):
            message = (f"learning rate is exactly 0 for the first {j} logged points (steps {int(steps[0])} to "
                       f"{int(steps[j - 1])}) before it is {format_rate(float(values[j]))} at step {int(steps[j])}, "
                       "its level at once: a warm-up ramp leaves 0 at its first step, so no update was made there (a "
                       "scheduler that only steps with the optimizer, and an optimizer that skipped or never applied "
                       "its steps: fp16 overflow, a DeepSpeed/accelerate setup that does not step).")
            out.append(Finding("lr_anomaly", "warning", int(steps[0]), message, end_step=int(steps[j - 1]),
                               metric=LR, evidence={"n_points": j, "leading": True}))
    return out


def _straight_to_its_level(after: np.ndarray) -> bool:
    """Whether the rate, from its first positive point, is at once at (nine tenths of) the highest it reaches: no
    warm-up ramp after the zeros (a ramp that starts late is a scheduler that held while an fp16 scaler calibrated,
    the schedule run as planned). Not where that first rate is one unit of a decimal place (1e-06) and nothing higher
    is logged: a ramp printed at fixed precision ('lr 0.000000', then '0.000001') shows its start as 0 and its first
    digit as a level, and cannot be told from one."""
    first, top = float(after[0]), float(np.max(after))
    if first < 0.9 * top:
        return False
    power = np.log10(first)
    return not (abs(power - round(power)) < 1e-9 and first >= top)


# A stretch of LR 0 at the log's start must cover this fraction of its points (1/5): an fp16 loss scaler calibrating
# skips its first few steps, and a scheduler that steps only with the optimizer holds the rate at 0 through them.
_LEADING_SHARE = 5
