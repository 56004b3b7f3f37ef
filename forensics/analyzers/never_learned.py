"""Never learned: the loss sits at the random-guess level and nothing moves.

Two levels are the signature of a model that learned nothing (VERDICTS.md):
* ln 2 = 0.6931 for a pairwise preference loss (DPO and kin): the policy and the reference
  agree on every pair. It learned nothing when the loss stays within `never_learned_tolerance`
  of ln 2 at (nearly) every logged step AND the gradients or rewards say so: grad_norm exactly
  0, or the rewards/margins exactly 0, or the loss not moving at all.
* about ln(vocabulary) for a fresh language-model head (9 to 13 for 8k to 440k tokens): a
  loss that sits flat in that range from the first step to the last, with grad_norm 0 or no
  movement, is a model that never got a gradient.
A DPO loss that falls below ln 2, or a pre-training loss that falls from ln(vocab), is healthy.
Always an error: a run that never learned is not usable.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, Metrics, finite, format_number, is_preference_log, real_loss

LN2 = math.log(2)
FRESH_HEAD_RANGE = (9.0, 13.0)  # ln(8k) .. ln(440k): the loss of uniform guessing over a vocabulary
_REWARD_KEYS = ("rewards/margins", "rewards/chosen", "rewards/rejected")


def detect_never_learned(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One `never_learned` error when the loss sits at the random-guess level and nothing moves, or []."""
    loss = real_loss(metrics) if LOSS in metrics else None
    if loss is None or len(loss) < thresholds.never_learned_points:
        return []
    values = loss.to_numpy()
    if is_preference_log(metrics):
        return _at_ln2(metrics, loss, values, thresholds)
    return _at_fresh_head(metrics, loss, values, thresholds)


def _at_ln2(metrics: Metrics, loss, values, thresholds: Thresholds) -> list[Finding]:
    near = np.abs(values - LN2) <= thresholds.never_learned_tolerance
    if near.mean() < 0.9:
        return []
    why = _stillness(metrics, values, thresholds) or _zero_rewards(metrics)
    if why is None:
        return []
    message = (f"the model never learned: the preference loss stays at ln 2 = 0.6931 (random choice between the "
               f"two answers) at {int(near.sum())} of {len(values)} logged steps, and {why}. Check that the "
               "chosen and rejected answers differ, that the reference model is not the policy itself with "
               "frozen weights, and the learning rate.")
    return [_finding(loss, message, {"level": LN2, "reason": why, "share_at_level": float(near.mean())})]


def _at_fresh_head(metrics: Metrics, loss, values, thresholds: Thresholds) -> list[Finding]:
    lo, hi = FRESH_HEAD_RANGE
    level = float(np.median(values))
    if not lo <= level <= hi:
        return []
    spread = (values.max() - values.min()) / level
    why = _stillness(metrics, values, thresholds)
    if spread > thresholds.never_learned_spread or why is None:
        return []
    message = (f"the model never learned: the loss stays at about {format_number(level)} (about ln of a vocabulary of "
               f"{format_number(math.exp(level))} tokens: uniform guessing, as from a fresh output head) from step "
               f"{int(loss.index[0])} to step {int(loss.index[-1])}, and {why}. Check that the weights were "
               "loaded, that parameters require gradients and that the learning rate is not 0.")
    return [_finding(loss, message, {"level": level, "reason": why, "spread": float(spread)})]


def _stillness(metrics: Metrics, values, thresholds: Thresholds) -> str | None:
    """Why the run did not move, or None if it did: grad_norm exactly 0, or a loss that never changes."""
    grad = metrics.get(GRAD_NORM)
    if grad is not None:
        g = finite(grad).to_numpy()
        if len(g) and np.all(g == 0.0):
            return "grad_norm is exactly 0 at every logged step"
    if np.ptp(values) <= thresholds.never_learned_still:
        return f"the loss does not move at all (it changes by at most {format_number(np.ptp(values))})"
    return None


def _zero_rewards(metrics: Metrics) -> str | None:
    for key in _REWARD_KEYS:
        series = metrics.get(key)
        if series is not None and len(finite(series)) and np.all(finite(series).to_numpy() == 0.0):
            return f"{key} is exactly 0 at every logged step"
    return None


def _finding(loss, message: str, evidence: dict) -> Finding:
    return Finding("never_learned", "error", int(loss.index[0]), message, end_step=int(loss.index[-1]),
                   metric=LOSS, evidence={**evidence, "n_points": int(len(loss))})
