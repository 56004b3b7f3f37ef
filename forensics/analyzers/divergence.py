"""Divergence: the training loss rises many-fold over its own earlier level and does not come back.

Works the same on a 10-point log and a 10,000-point one. The loss is smoothed with a centred
rolling median whose width grows with the log (a tenth of its points, 3 to 51), so per-step
noise on small batches and heavy-tailed batches neither start nor end a divergence. The run
diverges when, over its last `divergence_points` points (fewer on a short log: a fifth of it,
at least 2):
* every smoothed value stays above `divergence_factor` x the lowest smoothed level before, and
* the end level (median of those raw points) is above that level by at least
  `divergence_min_rise` (a loss moving from 0.05 to 0.1 is noise, not a divergence), and
* the loss has come back less than `divergence_max_recovery` of the way from its peak (a loss
  that jumps and falls again is a spike or a new phase).
The onset is where the loss leaves its trend: the first point after the lowest smoothed level
that rises above it by more than the log's own noise. A rise that starts at a learning-rate
restart is a new phase. Always an error. Preference/RL logs are judged only as a pairwise loss that came down under
ln 2 and then rose to stay well above it (`_pairwise_blow_up`).

A loss that blows up within its first few points (a learning rate far too high from the start
of warm-up) leaves no low for the smoothing to see: the rule then compares with where the log
started, the median of its first `START_POINTS` raw points (its first point in a log of under
20 finite points that then went NaN to the end: a run that blew up after a few steps). The run diverged when its
smoothed loss leaves `divergence_factor` x that start early (in the first tenth; anywhere before the last points of a
short log), never comes back under it, and ends there.

A blow-up the loss came part of the way back from still diverged when grad_norm jumped tenfold over
its early level and stays there to the end while the loss ends 1.25x its level before the jump: the
run as it ended is worse than it was before (`unrecovered_blow_up`, blow_up.py).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .blow_up import exploded_run_mean, unrecovered_blow_up
from .dead_end import came_back_dead, dead_end_message
from .loss_trend import MIN_POINTS, START_POINTS, restart_near, smoothed, smoothing_width, tail_points
from .metrics import LN2, LOSS, Metrics, finite, format_number, is_preference_log, point_noise, real_loss
from .sustained_rise import detect_sustained_step_up


def detect_divergence(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `divergence` finding from the step the loss left its trend: an error where it rose many-fold, a warning
    where it stepped up by less and stayed up (`detect_sustained_step_up`); or []."""
    if is_preference_log(metrics):
        return _pairwise_blow_up(metrics, thresholds)
    return _many_fold_rise(metrics, thresholds) or detect_sustained_step_up(metrics)


def _many_fold_rise(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The `divergence` error of a loss that rose many-fold and stayed up (the module's rules), or []."""
    loss = real_loss(metrics) if LOSS in metrics else pd.Series(dtype="float64")
    if loss.empty:
        return exploded_run_mean(metrics)
    if len(loss) < MIN_POINTS:
        return []
    values = loss.to_numpy(dtype="float64")
    smooth = smoothed(values)
    tail = tail_points(len(values), thresholds)
    floor_pos = int(np.argmin(smooth[:len(values) - tail]))
    floor = _level_at(values, floor_pos, float(smooth[floor_pos]))
    end_level = float(np.median(values[-tail:]))
    limit = thresholds.divergence_factor * floor
    dead = came_back_dead(values[floor_pos:], floor, thresholds)  # a blow-up that ends frozen: no recovery
    stayed_up = floor > 0 and np.all(smooth[-tail:] > limit) and end_level - floor >= thresholds.divergence_min_rise \
        and not _within_noise(values, floor, end_level, tail)
    if not (stayed_up or dead):
        return _never_back_to_start(metrics, loss, thresholds) or unrecovered_blow_up(metrics, loss, thresholds)
    peak = float(np.max(smooth[floor_pos:]))
    if not dead and peak > floor and (peak - end_level) / (peak - floor) >= thresholds.divergence_max_recovery:
        return _never_back_to_start(metrics, loss, thresholds) or unrecovered_blow_up(metrics, loss, thresholds)
    onset = _onset(values, smooth, floor_pos, end_level, thresholds.divergence_factor)
    if restart_near(metrics, loss, onset):
        return []
    rise_step = int(loss.index[onset])
    low = _held_low(values, floor_pos, onset, floor)
    message = dead_end_message(rise_step, low, values[floor_pos:], thresholds) if dead else (
               f"loss diverges from step {rise_step}: it rises from a low of about {format_number(low)} and stays "
               f"above {format_number(limit)} to the end of the log (about {format_number(end_level)} at the end, "
               f"{format_number(end_level / low)}x the low).")
    evidence = {"floor": low, "floor_step": int(loss.index[floor_pos]), "end_level": end_level, "peak": peak,
                "factor": end_level / low, "n_points": len(values) - onset}
    return [Finding("divergence", "error", rise_step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence=evidence)]


# A pairwise loss (DPO's -log sigmoid(beta x margin)) starts at ln 2; a low this far under it separated the pairs
_PAIRWISE_START = (LN2 - 0.03, LN2 + 0.15)
_PAIRWISE_APART = LN2 - 0.03


def _pairwise_blow_up(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """A pairwise preference loss (its first points at ln 2) that came down under it and then rose and stays over
    `divergence_factor` x ln 2 to the end of the log: the policy went from preferring the chosen answers to ranking
    them far below the rejected ones (a learning rate that blew the margins up the wrong way). An error from where it
    left its low; GRPO / PPO losses, which start near 0, are not such a loss."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if loss is None or len(loss) < MIN_POINTS:
        return []
    values = loss.to_numpy(dtype="float64")
    start = float(np.median(values[:3]))
    smooth = smoothed(values)
    tail = tail_points(len(values), thresholds)
    floor_pos = int(np.argmin(smooth[:len(values) - tail]))
    floor, bar = float(smooth[floor_pos]), thresholds.divergence_factor * LN2
    if not _PAIRWISE_START[0] <= start <= _PAIRWISE_START[1] or floor >= _PAIRWISE_APART \
            or not np.all(smooth[-tail:] > bar) or _pairs_still_ranked_right(metrics):
        return []
    end_level = float(np.median(values[-tail:]))
    onset = _onset(values, smooth, floor_pos, end_level, thresholds.divergence_factor)
    message = (f"the preference loss diverges from step {int(loss.index[onset])}: it came down to about "
               f"{format_number(floor)} (under ln 2 = 0.6931: the chosen answers preferred) and rose to stay above "
               f"{format_number(bar)} to the end (about {format_number(end_level)}): the policy now ranks the rejected "
               "answers far above the chosen ones. Lower the learning rate or raise beta, and resume from a checkpoint "
               "saved before the rise.")
    return [Finding("divergence", "error", int(loss.index[onset]), message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence={"floor": floor, "floor_step": int(loss.index[floor_pos]), "end_level": end_level,
                              "factor": end_level / LN2, "pairwise": True, "n_points": len(values) - onset})]


_PAIR_SIGNS = (("rewards/accuracies", 0.5), ("eval_rewards/accuracies", 0.5), ("rewards/margins", 0.0),
               ("eval_rewards/margins", 0.0))


def _pairs_still_ranked_right(metrics: Metrics) -> bool:
    """Whether the log's own pair metrics end on the right side (accuracy over chance, margins over 0): a loss whose
    level only looks like a blow-up (IPO's (margin - 1/(2 beta))^2 settles above ln 2 while it ranks pairs right)."""
    for name, chance in _PAIR_SIGNS:
        values = finite(metrics[name]) if name in metrics else None
        if values is not None and len(values):
            return float(values.iloc[-max(1, len(values) // 10):].median()) > chance
    return False


def _held_low(values: np.ndarray, floor_pos: int, onset: int, floor: float) -> float:
    """The level the loss held at its low, as a message states it: the smoothed low, except where the low is at the
    log's start, inside half a window of it: there the centred median had only the points after it (at the first of
    two points, their mean: a loss at 1.70 that jumps to 11.46 reads as a 'low' of 6.58), so the raw points from the
    low to the onset of the rise give it."""
    if floor_pos >= smoothing_width(len(values)) // 2 or onset <= floor_pos:
        return floor
    return float(np.median(values[floor_pos:onset]))


def _level_at(values: np.ndarray, pos: int, smoothed_low: float) -> float:
    """The loss's level at its low: the smoothed value there, or on a log of `_LEVEL_FROM` points or more, the
    median of the tenth of the log around it (`_LEVEL_HALF` points each side at least) where the loss held one level
    there (its outer thirds within `_HELD_LEVEL` of its middle). The lowest of thousands of 51-point medians of a noisy
    per-batch log is a dip of the noise (an RWKV reward loop: medians 0.34 throughout, a dip to 0.17), not a level
    the loss held and then left; the bottom of a V (a fall, then a blow-up) is a low it reached."""
    if len(values) < _LEVEL_FROM:
        return smoothed_low
    half = max(len(values) // 20, _LEVEL_HALF)
    window = values[max(0, pos - half):pos + half + 1]
    before, middle, after = (float(np.median(part)) for part in np.array_split(window, 3))
    if max(before, after) > _HELD_LEVEL * middle:
        return smoothed_low  # the loss came down into the low and climbed out of it (a V): a low it reached
    return max(smoothed_low, float(np.median(window)))


_HELD_LEVEL = 1.25  # a tenth of the log around a low whose outer thirds are within this of its middle held one level
# From this many points on, the low's level is read over a tenth of the log around it, at least `_LEVEL_HALF` points
# each side: a 25-point median of a noisy per-step log of 250 dips by chance (AbrahamKong's QLoRA: 1.07 among 1.24s)
_LEVEL_FROM, _LEVEL_HALF = 100, 25


_NOISE_Z = 3.0  # a rise from the low to the end level this many standard errors of the two medians is no noise


def _within_noise(values: np.ndarray, floor: float, end_level: float, tail: int) -> bool:
    """Whether the rise from the low to the end level is what the loss's own point-to-point noise gives two medians
    (the low, a smoothing window's; the end, the last `tail` points') that differ by chance: the lowest of a noisy
    plateau's rolling medians and its last points' median are apart by a couple of standard errors with nothing
    going wrong (cloud-zhoubingye's ChatGLM3 LoRA at about 0.18, point noise 0.14, logged every 50 steps: a low of
    0.11 and an end of 0.28, 2.5x). A divergence rises far out of its noise."""
    width = smoothing_width(len(values))
    sigma = point_noise(values[:len(values) - tail])
    return end_level - floor <= _NOISE_Z * 1.2533 * sigma * np.sqrt(1 / tail + 1 / width)


def _onset(values: np.ndarray, smooth: np.ndarray, floor_pos: int, end_level: float, factor: float) -> int:
    """Where the loss leaves its low level: the first point after the low that rises above it by more than the log's
    own noise; or, where the smoothed loss held its level a while and then climbed (`_held_then_climbed`), the point
    after the last one still near the low: within `_DRIFT` of the rise over it, and not yet halfway to the divergence
    bar (`factor` x the low). A loss that creeps up by a tenth of its rise before it climbs has not yet left its level
    (a ChatGLM3 LoRA logged every 50 steps: medians 1.84 creeping to 2.07 over 12000 steps, then 2.3, 3.1, 6.8 and
    6.2-6.6 to the end); one that doubled before it blew up had (0.66, 1.3, 1.5, then 31)."""
    lo, hi = max(0, floor_pos - 50), floor_pos + 51
    noise = float(np.median(np.abs(values[lo:hi] - smooth[lo:hi]))) * 1.4826  # scatter around the trend at the low
    margin = max(3 * noise, 0.02 * abs(smooth[floor_pos]))
    above = np.flatnonzero(smooth[floor_pos + 1:] > smooth[floor_pos] + margin)
    first = floor_pos + 1 + int(above[0]) if len(above) else floor_pos + 1
    if not _held_then_climbed(smooth, floor_pos, end_level, margin):
        return first
    low = float(smooth[floor_pos])
    near = np.flatnonzero(smooth[floor_pos + 1:] <= low + min(_DRIFT * (end_level - low), (factor - 1) / 2 * low))
    left = floor_pos + 1 + (int(near[-1]) + 1 if len(near) else 0)
    return min(max(first, left), len(values) - 1)


_DRIFT = 0.1  # a smoothed loss within this share of the whole rise (low to end) of its low still holds the low level
_KNEE_DEPTH = 0.25  # a knee this share of the climb under the straight climb: the loss held its level, then climbed


def _held_then_climbed(smooth: np.ndarray, floor_pos: int, end_level: float, margin: float) -> bool:
    """Whether the smoothed loss, on its way up from its low to halfway to its end level, bends: some point of it
    lies under the straight line between the two by `margin` and by `_KNEE_DEPTH` of that climb. A loss that climbs
    steadily from its low, slowing or not, lies near that line: it left its level at once."""
    halfway = np.flatnonzero(smooth[floor_pos + 1:] >= (smooth[floor_pos] + end_level) / 2)
    if not len(halfway):
        return False
    way = smooth[floor_pos:floor_pos + 2 + int(halfway[0])]
    under = float(np.max(np.linspace(way[0], way[-1], len(way)) - way))
    return under > max(margin, _KNEE_DEPTH * (way[-1] - way[0]))


def _never_back_to_start(metrics: Metrics, loss: pd.Series, thresholds: Thresholds) -> list[Finding]:
    """Divergence from the log's first points: the loss left `divergence_factor` x its starting level within
    the first tenth of the log and its smoothed level never came back under it, to the end."""
    values = loss.to_numpy(dtype="float64")
    n = len(values)
    if n < MIN_POINTS:
        return []
    # a short log counts only where the run then went NaN: its first point is the start, and it may leave it late
    short = n < 4 * START_POINTS
    if short and not _went_nonfinite_after(metrics, loss):
        return []
    k = 1 if short else START_POINTS
    start = float(np.median(values[:k]))
    limit = thresholds.divergence_factor * start
    end_level = float(np.median(values[-tail_points(n, thresholds):]))
    above = values > limit
    stays = np.logical_and.accumulate((smoothed(values) > limit)[::-1])[::-1]  # above from here to the end
    if start <= 0 or not above.any() or not stays.any():
        return []
    onset = max(int(np.argmax(above)), int(np.argmax(stays)))
    latest = n - tail_points(n, thresholds) if short else max(k + 1, n // 10)
    if onset > latest or end_level - start < thresholds.divergence_min_rise or restart_near(metrics, loss, onset):
        return []
    rise_step = int(loss.index[onset])
    message = (f"loss diverges from step {rise_step}: it started at about {format_number(start)} and never came back "
               f"under {format_number(limit)} (about {format_number(end_level)} at the end, "
               f"{format_number(end_level / start)}x where it started): the updates made the model worse than it "
               "was at the first step.")
    evidence = {"floor": start, "floor_step": int(loss.index[0]), "end_level": end_level,
                "peak": float(np.max(values[onset:])), "factor": end_level / start, "n_points": n - onset,
                "from_start": True}
    return [Finding("divergence", "error", rise_step, message, end_step=int(loss.index[-1]), metric=LOSS,
                    evidence=evidence)]


def _went_nonfinite_after(metrics: Metrics, loss: pd.Series) -> bool:
    """Whether the logged loss is NaN/Inf after its last finite point (the run blew up and stayed so)."""
    raw = metrics[LOSS]
    later = raw[raw.index > loss.index[-1]].to_numpy(dtype="float64")
    return bool(len(later)) and not np.isfinite(later).any()
