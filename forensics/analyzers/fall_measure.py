"""Whether a logged series fell clearly: the one measure learning evidence reads a loss (or, turned over, a reward
or an accuracy) by, and the `LearningEvidence` record that says what showed it.

A series fell when its last tenth ends clearly below where it started (`fell_clearly`): by `learning_min_fall` of its
start and by more than its own point-to-point noise could explain, read on the level after the first tenth, on the
first point (unless that point is a start-up transient alone), on a least-squares trend, or on a short log lower at
every point. One-step blips are set aside first (`without_blips`) and a loss swinging by turns is read in pairs
(`pair_means_if_alternating`). A log that starts mid-run (`starts_mid_run`) has no run start in its first point.
A loss logged in a few windows also fell where each later window is under its first (`later_windows_fell`); a
held-out loss, the mean over one fixed set, is read by `held_out_fall`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..config import Thresholds
from .metrics import finite, point_noise


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


def evidence_from(name: str, series, start: float, end: float) -> LearningEvidence:
    return LearningEvidence(name, float(start), float(end), int(len(series)), int(series.index[0]),
                            int(series.index[-1]))


def fell_clearly(series, thresholds: Thresholds, trend_z: float = 3.0) -> tuple[bool, float, float]:
    """Whether the last tenth ends clearly below where the log started (its first tenth, or its very first
    point, for a loss learned within the first tenth, unless that point is a start-up transient alone,
    `_first_point_alone`): by `learning_min_fall` of it, and by more than the loss's own point-to-point noise
    could explain (3 standard errors; `trend_z` of them for the trend, `LOWEST_END_Z` where the log ends on its lowest
    point: `_trend_to_its_lowest`)."""
    series = pair_means_if_alternating(without_blips(series))
    values = series.to_numpy(dtype="float64")
    k = max(1, len(values) // 10)
    first, head_median, tail = float(values[0]), float(np.median(values[:k])), float(np.median(values[-k:]))
    # (three single-batch points have no noise of their own to measure: no fall is read against it)
    sigma = (point_noise(values) or _sparse_noise(values)) if _noise_measurable(series.index) else np.inf
    # The median of k points varies by about 1.25 sigma / sqrt(k); one point by sigma.
    by_median = clear_fall(head_median, tail, 3 * 1.2533 * sigma * np.sqrt(2 / k), thresholds)
    one_point = 3 * sigma * np.sqrt(1 + 1.5708 / k)
    # (a log that starts mid-run - a resume, an excerpt - has a first point that is no start: one high point there is
    # the resume's first batch, not a loss the run brought down)
    by_first = clear_fall(first, tail, one_point, thresholds) and not starts_mid_run(series)
    if by_first and _first_point_alone(values, series.index, k, tail, one_point, thresholds):
        by_first, first = False, head_median
    # a loss that dropped to a new level early and stayed there, noisily: the level of everything after the first
    # tenth (its median, over many more points than the last tenth) against the first tenth's, where it ends too
    rest = float(np.median(values[k:])) if len(values) > k else tail
    by_level = clear_fall(head_median, rest, 3 * 1.2533 * sigma * np.sqrt(1 / k + 1 / max(1, len(values) - k)),
                           thresholds) and tail < head_median - thresholds.learning_min_fall * abs(head_median)
    # (a trend counts where the log also ends below where it began: a hump in the middle tilts a line over a flat log)
    trend = (falling_trend(values, sigma, thresholds, trend_z) or _trend_to_its_lowest(values, sigma, thresholds)) \
        and tail < head_median - _TREND_ENDS_LOWER * abs(head_median) and not came_back_up(values, sigma)
    fell = by_median or by_first or by_level or trend or _down_at_every_point(values, series.index) \
        or (_down_first_then_held(values) and not starts_mid_run(series))
    return fell, max(head_median, first), tail


def came_back_up(values: np.ndarray, sigma: float) -> bool:
    """Whether the log's last tenth stands above its lowest tenth (the median of k consecutive points, k a tenth of
    the log) by `_CAME_BACK_UNITS` times the noise of such a median and by more than the log fell from its first tenth
    to its last: the loss went down and came most of the way back up. A least-squares line tilts down over such a dip
    (a translation console's per-token loss from about 10.5 down to under 8 and back to about 10 in a dozen reports),
    but the run did not end lower than its start by more than its own swings: no evidence of a descent."""
    k = max(1, len(values) // 10)
    if len(values) < 3 * k or sigma <= 0:
        return False
    medians = np.array([np.median(values[i:i + k]) for i in range(len(values) - k + 1)])
    head, tail, lowest = float(medians[0]), float(medians[-1]), float(medians.min())
    return tail - lowest > _CAME_BACK_UNITS * 1.2533 * sigma * np.sqrt(2 / k) and tail - lowest > head - tail


_CAME_BACK_UNITS = 2.0  # (with the comeback also larger than the fall, a flat noisy log rarely shows this by chance)


_STEADY_POINTS = 4  # a short log lower at every point than at the one before, over this many points or more ...
_STEADY_FALL = 0.1  # ... and this share under its first in all


def _down_at_every_point(values: np.ndarray, steps) -> bool:
    """A short log that is lower at each point than at the one before, by `_STEADY_FALL` in all (HannahMariamj's
    LoRA: eval loss 4.970, 4.030, 3.593, 3.520). Its own point-to-point noise cannot be measured apart from the
    fall (the steps differ because the fall slows), and noise alone orders n points so once in n! (1 in 24 for four).
    Three points (1 in 6) count where each is the mean of a logging window (`window_means`) and the last is
    `WINDOW_FALL` under the first: the fall that two such windows show on their own (`two_windows_fell`), the
    window between them agreeing (a GPT-2 fine-tune logged every 100 steps: 0.726, 0.213, 0.142)."""
    if len(values) < 3 or not bool(np.all(np.diff(values) < 0)) or not values[0] > 0:
        return False
    if len(values) >= _STEADY_POINTS:
        return float(values[-1]) <= (1 - _STEADY_FALL) * float(values[0])
    return window_means(steps) and float(values[-1]) <= (1 - WINDOW_FALL) * float(values[0])


_SHORT_LOG = 8  # window means, at most: a log this short has one point for its head and one for its tail ...
_LATER_FALL = 0.05  # ... so its later points as a whole are read against its first: their mean this share under it ...
_LATER_UNITS = 1.645  # ... and this many standard errors of that difference (one-sided 5%)


def later_windows_fell(series, name: str) -> LearningEvidence | None:
    """`name`'s evidence, from its first point to the mean of its later ones, where the log as `fell_clearly` reads it
    (blips set aside, in pairs where it swings by turns) is a short log of window means each under its first
    (`_later_windows_under_first`) that does not start mid-run; else None. Read beside `fell_clearly`, for a training
    or a held-out loss alone: a pairwise log's held-out loss is no evidence while its pairs stay at chance
    (prchigoyal01_Reasoning-Bias_dpo)."""
    read = pair_means_if_alternating(without_blips(series))
    values = read.to_numpy(dtype="float64")
    if len(values) < _STEADY_POINTS or starts_mid_run(read) \
            or not _later_windows_under_first(values, read.index, point_noise(values)):
        return None
    return evidence_from(name, series, float(values[0]), float(np.mean(values[1:])))


def _later_windows_under_first(values: np.ndarray, steps, sigma: float) -> bool:
    """A short log of window means (`window_means`: each the mean over `WINDOW_STEPS` steps or more), `_STEADY_POINTS`
    to `_SHORT_LOG` points, whose later points are each under the first and, as a whole, clearly under it: their
    mean `_LATER_FALL` of it under, by `_LATER_UNITS` times the noise of that difference (`sigma` a point, the mean
    of the n - 1 later points adding sigma / sqrt(n - 1)). On so few points the head and the tail are one point
    each, and a last window that rose again reads the fall as noise, whatever the windows between show
    (abdallaelmahdy_Transformer's Llama-2 QLoRA, one pass over 1,000 examples logged every 25 steps: 1.510, then
    1.459, 1.318, 1.357, 1.415, a mean 8.2% and 1.9 units under the first; lmaddalena_mistral-tutorial's pair means
    1.349, then 1.214, 1.152, 1.172, 1.171, 12.7% and 3.5 units). Calibrated on the corpus's short logs judged
    no_learning_evidence or never_learned whose later points are all under the first: faezeh-gholamrezaie (100-step
    windows 3.568, then 3.54-3.545: 0.7%), AaronBarbosa12 (8.883 -> 8.869, 0.1%), ml-explore_mlx-lm_pr326 (eight
    single steps 3.239, then 1.821-3.174: 18.8% but 1.4 units, an excerpt from step 67 on),
    hiyouga_LlamaFactory_issue669 (ten single steps 1.499, then 1.285-1.454: 6.7%, 2.1 units): each fails the share,
    the units, the windows or the length; the rest of them (sairaamspage 1.113 then 1.163-1.279, MuQlanyu, kat-le,
    OpenGVLab, ...) have a later point above the first."""
    n, first = len(values), float(values[0])
    if not _STEADY_POINTS <= n <= _SHORT_LOG or not first > 0 or not window_means(steps) \
            or not bool(np.all(values[1:] < first)):
        return False
    fall = first - float(np.mean(values[1:]))
    return fall >= _LATER_FALL * first and fall > _LATER_UNITS * sigma * np.sqrt(1 + 1 / (n - 1))


def _down_first_then_held(values: np.ndarray) -> bool:
    """A log whose first `_STEADY_POINTS` points or more are each lower than the one before (the order noise gives once
    in 24 for four), by more than `_HELD_NOISE_UNITS` times the noise of the points after them (`_held_noise`) and by
    `_TREND_ENDS_LOWER` of the start at least, and whose later points hold the level that descent reached: their
    median at or under its third point. The descent came first and the points after it, noisy as they are, do not
    come back; measured against that later noise spread over the whole log, a fall made in the first points reads as
    chance (a Llama LoRA logged every 50 steps: 2.053, 1.983, 1.901, 1.849, then 1.85-1.95 to the end). Not for a log
    that starts mid-run (`fell_clearly` checks): its first point is a resume's first batch, no start."""
    if not values[0] > 0:
        return False
    for length in range(_STEADY_POINTS, _descent_length(values) + 1):
        head, rest = values[:length], values[length:]
        fall = float(head[0] - head[-1])
        if len(rest) >= _STEADY_POINTS and fall > _HELD_NOISE_UNITS * _held_noise(rest) \
                and fall >= _TREND_ENDS_LOWER * float(head[0]) and float(np.median(rest)) <= float(head[2]):
            return True
    return False


def _descent_length(values: np.ndarray) -> int:
    """How many points the log starts with that are each lower than the one before (the first counted)."""
    rises = np.flatnonzero(np.diff(values) >= 0)
    return int(rises[0]) + 1 if len(rises) else len(values)


def _held_noise(rest: np.ndarray) -> float:
    """The noise of the points that hold a level: their scatter about its median, or their point-to-point noise where
    that is smaller (points still drifting). Batch-to-batch losses that swing up and down by turns differ from one
    point to the next by more than they scatter about their level (a batch-1 LoRA's steps after a five-point
    descent: 4.30, 3.95, 4.19, 3.80, 4.20, a point-to-point noise of 0.33 about a level they hold within 0.17)."""
    return min(point_noise(rest), float(1.4826 * np.median(np.abs(rest - np.median(rest)))))


_HELD_NOISE_UNITS = 3.0
_TREND_ENDS_LOWER = 0.01  # the last tenth's median this share under the first tenth's, for a falling line to count


_ALTERNATING = 0.9  # the share of consecutive steps that change direction in a loss that swings up and down by turns
_ALTERNATION_POINTS = 10


def pair_means_if_alternating(series: pd.Series) -> pd.Series:
    """The means of a loss's pairs of points (at each pair's second step) where it swings up and down by turns (at
    least `_ALTERNATING` of its steps change direction over `_ALTERNATION_POINTS` points or more, as batches grouped by
    length make it: long and short answers logged in turn), else the series itself. The swing is the batches' make-up,
    not the level the run is at nor its noise (AhmedNabil03's Llama-2 LoRA: 1.27 and 0.85 by turns after 2.43 at its
    first point; its pairs 1.78, 1.11, 1.09 ... 1.06)."""
    values = series.to_numpy(dtype="float64")
    if not swings_by_turns(values):
        return series
    n = len(values) // 2 * 2
    return pd.Series(values[:n].reshape(-1, 2).mean(axis=1), index=series.index[1:n:2])


def swings_by_turns(values: np.ndarray) -> bool:
    """Whether a loss swings up and down by turns: `_ALTERNATING` or more of its steps change direction, over
    `_ALTERNATION_POINTS` points or more (each point then on the other side of its neighbours from the one before)."""
    steps = np.diff(values)
    return len(values) >= _ALTERNATION_POINTS and float(np.mean(steps[1:] * steps[:-1] < 0)) >= _ALTERNATING


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
    logging window (`window_means`): a first window's mean above the rest is the loss falling within it."""
    if len(values) < 3 or clear_fall(float(values[1]), tail, noise, thresholds) or window_means(steps):
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


def falling_trend(values: np.ndarray, sigma: float, thresholds: Thresholds, z: float = 3.0) -> bool:
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


LOWEST_END_Z = 2.5  # standard errors of a falling line enough where the log also ends on its lowest point ...
LOWEST_END_POINTS = 10  # ... over this many points or more: the shortest log the rate below was simulated on


def _trend_to_its_lowest(values: np.ndarray, sigma: float, thresholds: Thresholds) -> bool:
    """A least-squares line falling by `LOWEST_END_Z` standard errors (not 3) over a log of `LOWEST_END_POINTS`
    points or more whose last point is its lowest: on flat logs of independent noise the two come together less often
    than the 3-unit line alone comes by chance (simulated, with the robust noise `fell_clearly` reads by: 0.6% against
    1.4% of 14 points, 1.2% against 2.3% of 10, 0.3% against 1.0% of 20), and either of them adds a few tenths of a
    percent to the line's own rate (1.6% -> 1.9% of 14 points, 2.6% -> 2.9% of 10, 1.1% -> 1.3% of 20); shorter logs
    were not simulated, and on them a last point that is the lowest comes by chance far more often (1 in n).
    SavinovSergey_shad_homeworks' QLoRA of Llama-3.2-3B on fresh code files at every step, logged every 10: 0.6569 ...
    0.6590, 0.6172, 0.6270, 0.5992, 0.5881, 0.5787, a line falling 2.7 units to its last and lowest point, 12% under
    its first."""
    return len(values) >= LOWEST_END_POINTS and float(values[-1]) <= float(values.min()) \
        and falling_trend(values, sigma, thresholds, LOWEST_END_Z)


def _noise_measurable(steps) -> bool:
    """Whether a log's own point-to-point noise can be measured: more than `_FEWEST_MEASURED` points, or that many
    where each is the mean of a logging window (`window_means`), as `_down_at_every_point` counts three. On three
    points the noise is the difference of their two steps alone, near nothing where they happen to fall in line, and
    any fall then reads as many standard errors, whatever one batch to the next moves a loss by (christianderrico's
    Mistral LoRA logged every step, stopped by hand at step 5 of 34: 5.236, 5.114, 5.037, a 'noise' of 0.023)."""
    return len(steps) > _FEWEST_MEASURED or window_means(steps)


_FEWEST_MEASURED = 3


def clear_fall(head: float, tail: float, noise: float, thresholds: Thresholds) -> bool:
    return tail < head - thresholds.learning_min_fall * abs(head) and head - tail > noise


_LATE_START = 3  # logging intervals before the first logged loss: the log is a tail of the run


def starts_mid_run(loss) -> bool:
    """Whether the log's first loss comes `_LATE_START` logging intervals or more after step 0: a tail or an excerpt
    of a run, whose start is not in the file."""
    if len(loss) < 2:
        return False
    gap = float(np.median(np.diff(loss.index.to_numpy(dtype="float64"))))
    return gap > 0 and float(loss.index[0]) >= _LATE_START * gap


WINDOW_STEPS = 10  # two logged losses this many steps apart or more are each a mean over that many steps ...
WINDOW_FALL = 0.25  # ... and a fall of this share from one to the other is no noise
# Two windows each spanning this many passes over the training data or more average every example that many times
# over: the batches drawn, the noise `WINDOW_FALL` guards against, no longer differ between them, and a fall of
# `_PASSES_FALL` is the weights' doing. (A fixed held-out set, the like of it, moves 0.8% at most between evaluations
# where nothing learns, `lower_at_every_evaluation`; the margin above that is for dropout and the partial pass.)
_WINDOW_PASSES = 5.0
_PASSES_FALL = 0.05


def two_windows_fell(loss, epochs=None) -> bool:
    """Two training losses, each the mean of a logging window of `WINDOW_STEPS` steps or more (the HF Trainer logs
    the mean since the last log), the second `WINDOW_FALL` or more under the first (mkcomer237: 0.352 at step 50,
    0.198 at 100), or `_PASSES_FALL` where `epochs` (the log's epoch counter) shows each window spanning
    `_WINDOW_PASSES` passes over the data or more (Tu-Zhenzhao's Llama-3.1-8B LoRA over a ~20-example set, epoch 40
    at step 50 and 80 at 100: 2.1177 then 1.9414, 8.3% under)."""
    if len(loss) != 2:
        return False
    first, second = float(loss.iloc[0]), float(loss.iloc[1])
    fall = _PASSES_FALL if _windows_span_passes(loss, epochs) else WINDOW_FALL
    return window_means(loss) and first > 0 and second <= (1 - fall) * first


def _windows_span_passes(loss, epochs) -> bool:
    """Whether each logged loss's window, from the step before it was logged (0 for the first), spans
    `_WINDOW_PASSES` epochs or more by the log's epoch counter."""
    if epochs is None:
        return False
    epochs = finite(epochs)
    at = epochs[~epochs.index.duplicated(keep="last")].reindex(loss.index).to_numpy(dtype="float64")
    spans = np.diff(np.concatenate([[0.0], at]))
    return not np.isnan(at).any() and bool(np.all(spans >= _WINDOW_PASSES))


def window_means(loss) -> bool:
    """Whether each logged loss (a series, or its steps) is the mean of a logging window of `WINDOW_STEPS` steps or
    more."""
    steps = np.asarray(getattr(loss, "index", loss), dtype="int64")
    return len(steps) > 0 and int(steps[0]) >= WINDOW_STEPS and bool(np.all(np.diff(steps) >= WINDOW_STEPS))
