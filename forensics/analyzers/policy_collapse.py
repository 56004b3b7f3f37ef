"""A PPO policy that bought its reward by collapsing: entropy near gone, far from its reference model.

TRL's PPO (and RLOO) trainers log the policy's entropy on its sampled responses (`objective/entropy`) and its KL to
the reference model (`objective/kl`). A rising reward is what the run was for, but a reward won while the entropy falls
to a fraction of its start and the KL climbs to many nats is the pattern of a policy that found what the reward model
likes (reward over-optimisation, mode collapse), not proof of better responses: the reward model is the only judge,
and it is a small learned one. A warning: the data cannot tell good responses from a gamed reward model; reading
samples can. Left alone: an entropy that falls while the KL stays small (a policy that sharpened near its reference),
and a KL that grows while the entropy holds.

TRL sums both over a response's tokens (`-logprobs.sum(1).mean()`), so an entropy that fell may be responses that got
shorter. Where the log holds the mean response length (`RESPONSE_LENGTHS`) the entropy is read per token; where it
does not, the message says the responses may have got shorter. The KL is read as logged: a sequence's KL to the
reference is the distance that matters, and shorter responses would lower it, not raise it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, finite, format_number
from .reward_decline import MIN_POINTS, reward_metric

ENTROPY, KL = "objective/entropy", "objective/kl"
# The mean response length in tokens, as TRL's trainers log it: the old PPOTrainer's `tokens/responses_len_mean`, the
# GRPO-era trainers' `completions/mean_length` (`completion_length` before TRL 0.16). TRL 0.12+'s PPO/RLOO log none.
RESPONSE_LENGTHS = ("tokens/responses_len_mean", "completions/mean_length", "completion_length")
_ENTROPY_LEFT = 0.25  # the last eighth's entropy at most this share of the first eighth's: most of it gone
_KL_NATS = 10.0  # ... with the KL to the reference this many nats or more over the last eighth: far from where it began
_HALVED = 0.5  # the collapse is dated at the first eighth whose entropy is under this share of the first's


def detect_policy_collapse(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `policy_collapse` warning at the eighth of the log where the entropy (per token where the response length
    is logged) had halved, or []."""
    if ENTROPY not in metrics or KL not in metrics:
        return []
    (entropy, length_name), kl = _entropy_per_token(metrics), finite(metrics[KL])
    if min(len(entropy), len(kl)) < MIN_POINTS:
        return []
    entropies, kls = _eighth_medians(entropy), _eighth_medians(kl)
    start = entropies[0][1]
    if start <= 0 or entropies[-1][1] > _ENTROPY_LEFT * start or kls[-1][1] < _KL_NATS:
        return []
    onset = next(step for step, level in entropies if level < _HALVED * start)
    what = f"{ENTROPY} per token ({ENTROPY} / {length_name})" if length_name else ENTROPY
    shorter = "" if length_name else (" (or the responses got shorter: TRL sums the entropy over a response's tokens, "
                                      "and this log has no response length to divide it by)")
    message = (f"{what} fell from about {format_number(start)} to {format_number(entropies[-1][1])} (medians of the "
               f"first and last eighths of the log) while {KL} rose from about {format_number(kls[0][1])} to "
               f"{format_number(kls[-1][1])} nats{_reward_beside(metrics, thresholds)}: the policy narrowed to a few "
               f"responses far from its reference model{shorter}, the pattern of a policy that found what the reward "
               "model likes rather than proof of better answers. Read samples from the last checkpoints before using "
               "them; a larger KL coefficient or an earlier checkpoint keeps the policy nearer its reference.")
    return [Finding("policy_collapse", "warning", onset, message, end_step=int(entropy.index[-1]), metric=ENTROPY,
                    evidence={"entropy_start": start, "entropy_end": entropies[-1][1], "kl_start": kls[0][1],
                              "kl_end": kls[-1][1], "per_token_by": length_name})]


def _entropy_per_token(metrics: Metrics) -> tuple[pd.Series, str | None]:
    """(the entropy divided by the mean response length logged at the same step, the length's name) where the log
    holds a length (`RESPONSE_LENGTHS`) beside `MIN_POINTS` or more entropies; else (the entropy as logged, None)."""
    entropy = finite(metrics[ENTROPY])
    name = next((k for k in RESPONSE_LENGTHS if k in metrics), None)
    if name is None:
        return entropy, None
    length = finite(metrics[name])
    length = length[~length.index.duplicated(keep="last")].reindex(entropy.index)
    per_token = (entropy / length)[length > 0]
    return (per_token, name) if len(per_token) >= MIN_POINTS else (entropy, None)


def _eighth_medians(series) -> list[tuple[int, float]]:
    """(first step, median) of each eighth of the series' points."""
    parts = np.array_split(np.arange(len(series)), 8)
    return [(int(series.index[p[0]]), float(series.iloc[p].median())) for p in parts if len(p)]


def _reward_beside(metrics: Metrics, thresholds: Thresholds) -> str:
    """The reward the collapse was bought with, as a clause for the message: its first and last eighths' medians, read
    the way the entropy and the KL are, over `MIN_POINTS` logged rewards or more, and whether it rose, fell or held
    (a move under `learning_min_fall` of its first eighth is no move); "" where the log has too few rewards."""
    name = reward_metric(metrics)
    reward = finite(metrics[name]) if name else None
    if reward is None or len(reward) < MIN_POINTS:
        return ""
    medians = _eighth_medians(reward)
    first, last = medians[0][1], medians[-1][1]
    moved = thresholds.learning_min_fall * abs(first)
    if abs(last - first) <= moved:
        return f", and {name} held at about {format_number(first)} ({format_number(last)} over the last eighth)"
    went = "rose" if last > first else "fell"
    return f", and {name} {went} from about {format_number(first)} to {format_number(last)}"
