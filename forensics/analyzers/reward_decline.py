"""An RL fine-tune (GRPO, PPO) whose reward gave back what it had gained.

In GRPO/PPO logs the loss says little (near 0 by construction); the reward is what learning
looks like (SIGNALS.md #20: "watch reward instead"). The reward is smoothed with a rolling median
over a window of an eighth of the log; when its level at the end has fallen from its peak by more
than half of what it had gained from the start, and by more than the reward's own noise, the
policy got worse after the peak: a warning, dated at the peak (where the reward never rose clear of
its start's noise, at the last step it still held its start's level), naming the checkpoints around it
as the better ones. A held-out reward (verl's `val-core/<data>/reward/mean@1`, greedy answers on a
fixed test set) is judged where one is logged, in place of the train reward. The length of the completions is reported
beside it: a policy whose every completion hits the length limit (completions/clipped_ratio near 1) is a common way
down.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, RLMetrics, finite, format_number, point_noise

REWARD_KEYS = ("reward", "rewards/mean", "objective/rlhf_reward", "ppo/mean_scores")
# A hand-written RL loop's mean reward over its sampled completions: the reward only in a log known to be RL (its
# names, or a profile that says RL: `RLMetrics`), for TRL's RewardTrainer logs `mean_reward` as its model's score
_LOOP_REWARD_KEYS = ("mean_reward", "reward_mean", "avg_reward")
CLIPPED = "completions/clipped_ratio"
MIN_POINTS = 16  # fewer logged rewards cannot tell a trend from the reward's own noise
_HELD_OUT_REWARDS = (re.compile(r"val-core/.+/mean@\d+"), re.compile(r"val-aux/.+/reward/mean@\d+"),
                     re.compile(r"eval_test_score/.+"))
# A median of n noisy points strays about 1.25x as far from the level as their mean does (sqrt(pi/2))
_MEDIAN_ERROR = 1.2533
# The highest of a series' smoothed values stands about two of their errors above its level even where the level
# is flat (the most of some eight independent windows): a peak no higher above the start is no rise
_PEAK_CLEAR = 2.0


def reward_metric(metrics: Metrics) -> str | None:
    """The name of the RL reward the log holds (GRPO's `reward`, PPO's scores, an RL loop's `mean_reward`), or None
    for a log without one."""
    named = next((k for k in REWARD_KEYS if k in metrics), None)
    if named is None and (isinstance(metrics, RLMetrics) or "std_reward" in metrics):
        return next((k for k in _LOOP_REWARD_KEYS if k in metrics), None)
    return named


def held_out_reward_metrics(metrics: Metrics) -> list[str]:
    """The held-out reward series a log holds, the kind verl names its core metric first: `val-core/<data>/<score>/
    mean@N`, then `val-aux/<data>/reward/mean@N`, then older verl's `val/test_score/<data>` (read as
    `eval_test_score/<data>`); [] for a log without one."""
    for shape in _HELD_OUT_REWARDS:
        found = sorted(name for name in metrics if shape.fullmatch(name))
        if found:
            return found
    return []


def detect_reward_decline(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `reward_decline` warning when the reward fell back after its peak, or []. Where a held-out reward is
    logged often enough it is the one judged: it says how the policy does on what it did not train on, while the
    train reward moves with each batch's prompts."""
    held_out = [name for name in held_out_reward_metrics(metrics) if len(finite(metrics[name])) >= MIN_POINTS]
    if held_out:
        # several test sets are judged as one (their mean where all were evaluated): each set judged alone is one more
        # chance for a flat reward's noise to read as a fall
        reward = pd.concat([finite(metrics[name]) for name in held_out], axis=1, join="inner").mean(axis=1)
        name = (held_out[0] if len(held_out) == 1
                else f"the mean of {len(held_out)} held-out rewards ({held_out[0]}, ...)")
        finding = _decline(metrics, reward, name, held_out=True)
        return [finding] if finding else []
    train = reward_metric(metrics)
    finding = _decline(metrics, finite(metrics[train]), train, held_out=False) if train else None
    return [finding] if finding else []


def _decline(metrics: Metrics, reward, name: str, held_out: bool) -> Finding | None:
    if len(reward) < MIN_POINTS:
        return None
    window = max(3, len(reward) // 8)
    level = reward.rolling(window, center=True, min_periods=window).median().dropna()
    start, end = float(reward.iloc[:window].median()), float(reward.iloc[-window:].median())
    noise = _MEDIAN_ERROR * _point_noise(reward, held_out) / np.sqrt(window)
    peak_step, peak = int(level.idxmax()), float(level.max())
    if peak - start <= _PEAK_CLEAR * noise:  # no rise above the start's noise: the fall is measured from the start
        peak, peak_step = start, int(level[level >= start - _PEAK_CLEAR * noise].index[-1])
    gained, lost = peak - start, peak - end
    # A held-out reward's peak, the highest of its smoothed values, stands about `_PEAK_CLEAR` errors above its level
    # by chance alone: its fall is counted from that level (a train reward's judged as before: its batches vary more)
    counted = lost - (_PEAK_CLEAR * noise if held_out and gained > 0 else 0.0)
    if lost <= 0.5 * max(gained, 0.0) or counted <= 3 * noise or peak_step >= int(reward.index[-window]):
        return None
    which = "the held-out reward " if held_out else ""
    rise = (f"rose from about {format_number(start)} to {format_number(peak)} around step {peak_step}" if gained > 0
            else f"held about {format_number(start)} until step {peak_step}")
    message = (f"{which}{name} {rise} and fell back to about {format_number(end)} by the end: the policy got worse "
               f"after step {peak_step}{_clipped_note(metrics)}. A checkpoint near step {peak_step} holds the better "
               "policy; check the reward functions for a way to score without doing the task, the KL coefficient and "
               "the learning rate.")
    return Finding("reward_decline", "warning", peak_step, message, end_step=int(reward.index[-1]), metric=name,
                   evidence={"start": start, "peak": peak, "peak_step": peak_step, "end": end,
                             "noise": float(noise), "window": window, "held_out": held_out})


def _point_noise(reward, held_out: bool) -> float:
    """The reward's point-to-point noise. A held-out reward is a share of a fixed test set answered right: its values
    are multiples of one answer's share, so many steps between them tie and the robust measure (the MAD of the steps)
    reads too little noise; their plain spread is taken where it is larger."""
    robust = point_noise(reward)
    if not held_out:
        return robust
    return max(robust, float(np.std(np.diff(reward.to_numpy(dtype="float64")))) / np.sqrt(2))


def _clipped_note(metrics: Metrics) -> str:
    if CLIPPED not in metrics:
        return ""
    clipped = finite(metrics[CLIPPED])
    if len(clipped) < 4:
        return ""
    k = max(1, len(clipped) // 8)
    first, last = float(clipped.iloc[:k].median()), float(clipped.iloc[-k:].median())
    if last < 0.9 or last <= first:
        return ""
    return (f"; {CLIPPED} went from {format_number(first)} to {format_number(last)}: nearly every completion now "
            "runs into the length limit")
