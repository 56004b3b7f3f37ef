"""A PPO policy that bought its reward by collapsing: entropy near gone, far from its reference model.

TRL's PPO (and RLOO) trainers log the policy's entropy on its sampled responses (`objective/entropy`) and its KL to
the reference model (`objective/kl`). A rising reward is what the run was for, but a reward won while the entropy falls
to a fraction of its start and the KL climbs to many nats is the pattern of a policy that found what the reward model
likes (reward over-optimisation, mode collapse), not proof of better responses: the reward model is the only judge,
and it is a small learned one. A warning: the data cannot tell good responses from a gamed reward model; reading
samples can. Left alone: an entropy that falls while the KL stays small (a policy that sharpened near its reference),
and a KL that grows while the entropy holds.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, finite, format_number
from .reward_decline import MIN_POINTS, reward_metric

ENTROPY, KL = "objective/entropy", "objective/kl"
_ENTROPY_LEFT = 0.25  # the last eighth's entropy at most this share of the first eighth's: most of it gone
_KL_NATS = 10.0  # ... with the KL to the reference this many nats or more over the last eighth: far from where it began
_HALVED = 0.5  # the collapse is dated at the first eighth whose entropy is under this share of the first's


def detect_policy_collapse(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `policy_collapse` warning at the eighth of the log where the entropy had halved, or []."""
    if ENTROPY not in metrics or KL not in metrics:
        return []
    entropy, kl = finite(metrics[ENTROPY]), finite(metrics[KL])
    if min(len(entropy), len(kl)) < MIN_POINTS:
        return []
    entropies, kls = _eighth_medians(entropy), _eighth_medians(kl)
    start = entropies[0][1]
    if start <= 0 or entropies[-1][1] > _ENTROPY_LEFT * start or kls[-1][1] < _KL_NATS:
        return []
    onset = next(step for step, level in entropies if level < _HALVED * start)
    message = (f"{ENTROPY} fell from about {format_number(start)} to {format_number(entropies[-1][1])} (medians of the "
               f"first and last eighths of the log) while {KL} rose from about {format_number(kls[0][1])} to "
               f"{format_number(kls[-1][1])} nats{_reward_beside(metrics)}: the policy narrowed to a few responses far "
               "from its reference model, the pattern of a policy that found what the reward model likes rather than "
               "proof of better answers. Read samples from the last checkpoints before using them; a larger KL "
               "coefficient or an earlier checkpoint keeps the policy nearer its reference.")
    return [Finding("policy_collapse", "warning", onset, message, end_step=int(entropy.index[-1]), metric=ENTROPY,
                    evidence={"entropy_start": start, "entropy_end": entropies[-1][1], "kl_start": kls[0][1],
                              "kl_end": kls[-1][1]})]


def _eighth_medians(series) -> list[tuple[int, float]]:
    """(first step, median) of each eighth of the series' points."""
    parts = np.array_split(np.arange(len(series)), 8)
    return [(int(series.index[p[0]]), float(series.iloc[p].median())) for p in parts if len(p)]


def _reward_beside(metrics: Metrics) -> str:
    name = reward_metric(metrics)
    reward = finite(metrics[name]) if name else None
    if reward is None or len(reward) < MIN_POINTS:
        return ""
    first, last = _eighth_medians(reward)[0][1], _eighth_medians(reward)[-1][1]
    return f", and {name} went from about {format_number(first)} to {format_number(last)}"
