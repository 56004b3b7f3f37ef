"""What a run logged, metric by metric: the series every detector reads.

A wide step x metric frame cannot tell a gap from a logged NaN (an eval step has no `loss`,
a summary step has no `grad_norm`), so detectors read `Metrics` instead: one Series per
metric holding only the points that were logged, NaN and Inf kept, indexed by step in order.

Also here: the facts several detectors share (which losses HF's NaN filter masked, whether
the log is a preference/RL run, where the learning-rate schedule restarted) and the number
format used in every message.
"""
from __future__ import annotations

import math
import re
from typing import Mapping

import numpy as np
import pandas as pd

Metrics = Mapping[str, pd.Series]

LOSS = "loss"
EVAL_ACCURACY_KEYS = ("eval_accuracy", "eval_acc")  # a held-out accuracy, as the Trainer's compute_metrics names it
GRAD_NORM = "grad_norm"
TRAIN_LOSS = "train_loss"  # the Trainer's closing summary: the mean of every step's loss over the run
LR = "learning_rate"

# DPO/KTO/ORPO log rewards/* and logps/*, GRPO/PPO rewards/*/mean, reward, kl: their
# "loss" sits near zero or below it by design, so it is not judged like an LM loss.
# (a DPO log whose training rows hold the loss alone may log its pair metrics at evaluation only: eval_rewards/*)
_PREFERENCE_PREFIXES = ("rewards/", "logps/", "objective/", "policy/", "eval_rewards/", "eval_logps/")
_PREFERENCE_KEYS = ("reward", "reward_std", "kl")


def metrics_from_rows(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """Long timeline rows (step, metric, value) -> {metric: Series of logged values by step}.

    Returns float64 Series sorted by step, one value per step (the last one logged).

    >>> rows = pd.DataFrame({"step": [2, 1, 2], "metric": ["loss", "loss", "grad_norm"],
    ...                      "value": [0.5, 1.0, float("nan")]})
    >>> m = metrics_from_rows(rows)
    >>> list(m["loss"].index), bool(np.isnan(m["grad_norm"].iloc[0]))
    ([1, 2], True)
    """
    out: dict[str, pd.Series] = {}
    if rows.empty:
        return out
    for name, part in rows.groupby("metric", sort=True):
        part = part.sort_values("step", kind="stable").drop_duplicates("step", keep="last")
        out[str(name)] = pd.Series(part["value"].to_numpy(dtype="float64"),
                                   index=part["step"].to_numpy(dtype="int64"), name=str(name))
    return out


class RLMetrics(dict):
    """The metrics of a run its configuration names RL (a GRPOConfig, a PPOConfig) whose log holds none of the RL
    names (a notebook's table of the policy-gradient loss alone): read as an RL log (`is_preference_log`), so that no
    detector judges its loss, near 0 or under it by construction, as a cross-entropy."""


def is_preference_log(metrics: Metrics) -> bool:
    """True for DPO/GRPO/PPO-style logs (rewards/*, logps/*, reward, kl keys), or for a run known to be RL
    (`RLMetrics`)."""
    return isinstance(metrics, RLMetrics) or logs_preference_metrics(metrics)


def logs_preference_metrics(metrics: Metrics) -> bool:
    """True where the log itself holds DPO/GRPO/PPO-style names (rewards/*, logps/*, reward, kl), whatever the
    configuration says."""
    return any(name.startswith(_PREFERENCE_PREFIXES) or name in _PREFERENCE_KEYS for name in metrics)


# A training perplexity logged beside the loss (exp of the per-token loss), by the names trainers give it.
PERPLEXITY_NAMES = ("perplexity", "perplex", "ppl", "train_ppl", "train_perplexity")

LN2 = math.log(2)  # a pairwise preference loss at chance (DPO and kin start there)
EXPLODED_LOSS = 15.0  # above ln(vocabulary) of any tokenizer (ln 440k = 13): a model whose numerics blew up


def masked_loss_steps(metrics: Metrics) -> pd.Index:
    """Steps where loss is exactly 0.0 (or -0.0) and HF's NaN filter is at work: next to a non-finite
    grad_norm, or, where grad_norm was not logged, after a loss above `EXPLODED_LOSS` (no loss falls from
    there to exactly 0 in one logging window: every step of the window was NaN), or beside a NaN eval loss."""
    loss, grad = metrics.get(LOSS), metrics.get(GRAD_NORM)
    if loss is None:
        return pd.Index([], dtype="int64")
    zero = loss.index[loss.to_numpy() == 0.0]
    if grad is not None:
        return zero.intersection(grad.index[~np.isfinite(grad.to_numpy())]).union(
            _overflowed_from_the_start(metrics, zero))
    frozen = lr_frozen_after_decay(metrics)
    in_freeze = (zero > frozen[0]) & (zero <= frozen[1]) if frozen else np.zeros(len(zero), dtype=bool)
    return zero[_after_exploded(loss)[loss.to_numpy() == 0.0] | in_freeze].union(
        _beside_nan_eval(metrics, zero)).union(mostly_skipped_zeros(metrics))


DEEPSPEED_SKIPPED = "skipped_steps"  # DeepSpeed's running count, `step=N, skipped=K` (ingest.stdout)
_MOSTLY_SKIPPED = 0.9  # a share of the updates a counted interval skipped: the scaler overflowed at (nearly) every step


def mostly_skipped_zeros(metrics: Metrics) -> pd.Index:
    """Losses of exactly 0.0 in a stretch of zeros that reaches into an interval where DeepSpeed's own `skipped=`
    count says `_MOSTLY_SKIPPED` of the updates or more were skipped by the fp16 loss scaler: the gradients
    overflowed at (nearly) every step, the step losses were non-finite, and HF's NaN filter logged each window of
    them as 0.0; the few updates left cannot fit anything to exactly 0 (a T5-11B under DeepSpeed fp16: loss 6.26,
    then 0.0 at every log, `step=2000, skipped=1995`)."""
    loss, counts = metrics.get(LOSS), metrics.get(DEEPSPEED_SKIPPED)
    if loss is None or counts is None:
        return pd.Index([], dtype="int64")
    counts = counts[np.isfinite(counts.to_numpy())]
    values, steps = loss.to_numpy(), loss.index.to_numpy()
    if counts.empty or not np.any(values == 0.0):
        return pd.Index([], dtype="int64")
    ends = counts.index.to_numpy(dtype="int64")
    starts = np.concatenate([[0], ends[:-1]])
    share = np.diff(np.concatenate([[0.0], counts.to_numpy()])) / np.maximum(ends - starts, 1)
    out: list[int] = []
    for i, j in true_runs(values == 0.0):
        lo, hi = int(steps[i]), int(steps[j - 1])
        if any(share[k] >= _MOSTLY_SKIPPED and lo <= ends[k] and hi > starts[k] for k in range(len(ends))):
            out.extend(int(s) for s in steps[i:j])
    return pd.Index(out, dtype="int64")


def _beside_nan_eval(metrics: Metrics, zero: pd.Index) -> pd.Index:
    """Zeros from a step whose eval loss is NaN on: the evaluation ran the weights and got NaN, so the weights are
    NaN, and a training loss of exactly 0.0 beside it is HF's filter hiding a NaN (A-Mayank's QLoRA: one row,
    training loss 0.000000, validation loss nan)."""
    evals, loss = metrics.get("eval_loss"), metrics.get(LOSS)
    if evals is None or zero.empty:
        return pd.Index([], dtype="int64")
    nan_evals = evals.index[~np.isfinite(evals.to_numpy())].intersection(zero)
    if not len(nan_evals):
        return pd.Index([], dtype="int64")
    first = nan_evals.min()
    before = loss[(loss.index < first) & np.isfinite(loss.to_numpy())]
    if len(before) and float(before.iloc[-1]) < _ROUNDING_FLOOR:
        # a loss that came down to 0.0001 rounds to 0.0: a fit, the eval set's NaN its own
        return pd.Index([], dtype="int64")
    return zero[zero >= first]


_ROUNDING_FLOOR = 0.01  # a logged loss under this reaches 0.0 by rounding (4 decimals), not by a NaN


_SCALE_FLOOR = "loss_scale_at_minimum"  # DeepSpeed stopped the run: its fp16 loss scale at the floor (ingest.stdout)


def _overflowed_from_the_start(metrics: Metrics, zero: pd.Index) -> pd.Index:
    """Steps of a run DeepSpeed stopped with its fp16 loss scale at the floor where loss, grad_norm and the learning
    rate are all exactly 0 from the first logged step: no optimizer step was ever taken (a warm-up rate stays 0 when
    the scheduler never steps), DeepSpeed logs grad_norm 0 for a skipped step, and HF's NaN filter logs the
    overflowed loss as 0.0 (FPT-VVU's fp16 ViVidBot: 16 such lines, then 'Current loss scale already at minimum')."""
    grad, lr = metrics.get(GRAD_NORM), metrics.get(LR)
    if _SCALE_FLOOR not in metrics or grad is None or lr is None or zero.empty:
        return pd.Index([], dtype="int64")
    still = grad.index[grad.to_numpy() == 0.0].intersection(lr.index[lr.to_numpy() == 0.0]).intersection(zero)
    steps = metrics[LOSS].index
    in_still = steps.isin(still)
    return steps[:len(steps) if in_still.all() else int(np.argmin(in_still))]  # the stretch from the first step


_DECAYING_BEFORE = 3  # logged intervals of a falling learning rate before it stopped


def lr_frozen_after_decay(metrics: Metrics) -> tuple[int, int] | None:
    """(last step the learning rate moved, last step of the stretch where it has not moved since) where a decaying
    schedule (`_DECAYING_BEFORE` falling intervals in a row) stops dead: HF steps the scheduler only when the
    optimizer stepped, and the fp16 loss scaler skips the optimizer on every overflowing step, so a frozen rate
    is a run of skipped updates (the loss of those steps is NaN, logged as 0.0 by HF's filter). None elsewhere
    (a constant schedule, or one that never froze)."""
    lr = metrics.get(LR)
    if lr is None or len(lr) < _DECAYING_BEFORE + 2:
        return None
    values = lr.to_numpy(dtype="float64")
    deltas = np.diff(values)
    for i in range(_DECAYING_BEFORE, len(deltas)):
        if deltas[i] == 0.0 and np.all(deltas[i - _DECAYING_BEFORE:i] < 0):
            end = i + 1
            while end + 1 < len(values) and values[end + 1] == values[i]:
                end += 1
            return int(lr.index[i]), int(lr.index[end])
    return None


def _after_exploded(loss: pd.Series) -> np.ndarray:
    """For each point: whether the last finite non-zero loss before it is above `EXPLODED_LOSS`."""
    values = loss.to_numpy(dtype="float64")
    real = np.where(np.isfinite(values) & (values != 0.0), values, np.nan)
    last_real = pd.Series(real).ffill().shift(1).to_numpy()
    return np.nan_to_num(last_real, nan=0.0) > EXPLODED_LOSS


def real_loss(metrics: Metrics) -> pd.Series:
    """The finite loss values that are real measurements: masked 0.0s and NaN/Inf left out."""
    loss = metrics.get(LOSS)
    if loss is None:
        return pd.Series(dtype="float64")
    loss = loss[np.isfinite(loss.to_numpy())]
    return loss.drop(masked_loss_steps(metrics), errors="ignore")


def finite(series: pd.Series) -> pd.Series:
    """The finite points of a series."""
    return series[np.isfinite(series.to_numpy())]


def lr_restart_steps(metrics: Metrics) -> list[int]:
    """Steps where the learning-rate schedule starts over (a new training phase or session).

    A restart is the rate at exactly 0 after being positive with a new warm-up after it, or
    jumping up by more than half after it had been decaying. A warm-up from the start is not
    a restart, nor is a schedule decaying to 0 at the run's last step.
    """
    lr = metrics.get(LR)
    if lr is None or len(lr) < 3:
        return []
    values, steps = lr.to_numpy(), lr.index.to_numpy()
    restarts = []
    for i in range(2, len(values)):
        before, prev, cur = values[i - 2], values[i - 1], values[i]
        decaying = prev < before
        rewarm = cur == 0 and i + 1 < len(values) and values[i + 1] > 0
        if (prev > 0 and rewarm) or (decaying and prev > 0 and cur > 1.5 * prev):
            restarts.append(int(steps[i]))
    return restarts


def restart_near(series: pd.Series, step: int, restarts: list[int], points: int) -> int | None:
    """The restart at or shortly before `step`: at most `points` logged points of `series` after it."""
    for r in reversed(restarts):
        if r <= step and int(((series.index > r) & (series.index <= step)).sum()) <= points:
            return r
    return None


def format_number(value: float) -> str:
    """A number as a message shows it: 4 significant digits, NaN/Inf spelled out, big integers whole (up to
    a loss scale's 2**40; beyond, a 300-digit float is no integer anyone counted).

    >>> [format_number(v) for v in (1.3, 0.000123, 65536.0, float("nan"), float("-inf"), 2.5e-07, 3.4e38)]
    ['1.3', '0.000123', '65536', 'NaN', '-Inf', '2.5e-07', '3.4e+38']
    """
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if 1e4 <= abs(value) <= 2.0 ** 40 and value == int(value):
        return str(int(value))
    return f"{value:.4g}"


def format_rate(value: float) -> str:
    """A learning rate as a message shows it: `format_number` but never as a whole number, which is for counts and
    loss scales (a rate multiplied up every epoch to 201635360.0 reads 2.016e+08: ChristianPE1_transformer-test).

    >>> [format_rate(v) for v in (201635360.0, 65536.0, 0.0002, 1.546, 3.0)]
    ['2.016e+08', '6.554e+04', '0.0002', '1.546', '3']
    """
    value = float(value)
    return f"{value:.4g}" if math.isfinite(value) and abs(value) >= 1e4 else format_number(value)


def a_or_an(spoken: str) -> str:
    """`spoken` after the article English reads it with: numbers are said as words, so 8, 11, 18, 80 and 800-odd
    start with a vowel ("an 8B model", "an 11-way classifier"), and so do those whose leading group of thousands is 11
    or 18 ("eleven thousand", "eighteen million"), but not "a hundred and ten"; every other number a consonant.

    >>> [a_or_an(s) for s in ("8B", "1.5B", "11-way", "18-point", "110-point", "80M", "3-way", "12-point")]
    ['an 8B', 'a 1.5B', 'an 11-way', 'an 18-point', 'a 110-point', 'an 80M', 'a 3-way', 'a 12-point']
    >>> [a_or_an(s) for s in ("11000-point", "18000 steps", "11,000,000 tokens", "110000-point", "1100 steps")]
    ['an 11000-point', 'an 18000 steps', 'an 11,000,000 tokens', 'a 110000-point', 'a 1100 steps']
    """
    leading = re.match(r"\d{1,3}(?:,\d{3})+(?!\d)|\d+", spoken)
    digits = leading.group().replace(",", "") if leading else ""
    vowel = digits.startswith("8") or digits[:len(digits) % 3 or 3] in ("11", "18")
    return f"{'an' if vowel else 'a'} {spoken}"


def params_in_words(n: float) -> str:
    """A parameter count as the text shows it, to three digits in the largest unit it reaches: the run line's
    "~26.6K parameters" and a cause's "of a 26.6K model" alike (the cause said "0.0266M" for the same model).

    >>> [params_in_words(n) for n in (26_600, 124_439_808, 8_030_261_248, 950)]
    ['26.6K', '124M', '8.03B', '950']
    """
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(int(n))


def format_ratio(value: float, base: float) -> str:
    """`value` against `base` as a message shows it, `1.008x`; a ratio that four digits would round to `1x` (a
    held-out loss 0.02% above its best: 070705gavrilovaanna_text_generation, 5.485 against 5.484) as the share it
    moved, so that a rise never reads as none.

    >>> [format_ratio(2.057, 2.041), format_ratio(5.485, 5.484), format_ratio(3.0, 1.5)]
    ['1.008x', '+0.018%', '2x']
    """
    ratio = float(value) / float(base)
    said = format_number(ratio)
    if said != "1" or ratio == 1:
        return f"{said}x"
    return f"{100 * (ratio - 1):+.2g}%"


def position_of(series: pd.Series, step: int) -> int:
    """The 0-based position of `step` among the series' logged points."""
    return int(np.searchsorted(series.index.to_numpy(), step))


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) positions of each stretch of consecutive True values, in order.

    >>> true_runs(np.array([False, True, True, False, True]))
    [(1, 3), (4, 5)]
    """
    padded = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def first_settled(mask: np.ndarray, share: float) -> int | None:
    """The first position that is True and from which at least `share` of the points to the end are True,
    or None."""
    mask = np.asarray(mask, dtype=bool)
    if not len(mask):
        return None
    share_after = np.cumsum(mask[::-1])[::-1] / np.arange(len(mask), 0, -1)
    found = np.flatnonzero(mask & (share_after >= share))
    return int(found[0]) if len(found) else None


def repeats_at_the_end(values) -> int:
    """How many of the last points are exactly the last one, to every bit (a loss frozen at one value; 0 for none).

    >>> repeats_at_the_end(np.array([2.5, 1.25, 1.25, 1.25])), repeats_at_the_end(np.array([1.0, 1.0]))
    (3, 2)
    """
    values = np.asarray(values, dtype="float64")
    if not len(values):
        return 0
    differ = np.flatnonzero(values != values[-1])
    return len(values) - (int(differ[-1]) + 1 if len(differ) else 0)


def head_and_tail(series: pd.Series, parts: int = 4) -> tuple[float, float]:
    """The medians of a series' first and last `parts`-th (at least one point each): where it started and ended."""
    k = max(1, len(series) // parts)
    return float(series.iloc[:k].median()), float(series.iloc[-k:].median())


def point_noise(values) -> float:
    """A series' point-to-point spread around its own trend, robustly: the MAD of its detrended differences,
    scaled to a standard deviation per point (0 for fewer than three points)."""
    diffs = np.diff(np.asarray(values, dtype="float64"))
    if len(diffs) < 2:
        return 0.0
    return float(1.4826 * np.median(np.abs(diffs - np.median(diffs))) / np.sqrt(2))


PASSES = 1.5  # an epoch counter that reaches this counts passes over the data


def passes_over_data(epochs: pd.Series) -> float:
    """The passes over the data a log's epochs show: the last epoch logged, plus the one under way where the log
    counts whole epochs done (a loop printing `Epoch 2` logs 1 for it: one done, the second under way)."""
    last = float(epochs.max())
    return last + 1 if np.all(epochs.to_numpy() == np.floor(epochs.to_numpy())) else last


def epoch_at(epochs: pd.Series | None, step: int) -> float | None:
    """The logged epoch at or just before `step`, or None where the log has none."""
    if epochs is None or not len(epochs):
        return None
    before = epochs[epochs.index <= step]
    return float(before.iloc[-1]) if len(before) else float(epochs.iloc[0])
