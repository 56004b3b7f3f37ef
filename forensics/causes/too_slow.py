"""Cause rule for a run that did not learn at a learning rate far under what recipes for its kind of run use.

The mirror of `optimization.lr_too_high`: a DPO adapter at 5e-7 or a QLoRA at 1e-6 moves its weights a tenth or a
hundredth as far per step as the recipes for it, and a short run at that rate ends where it began. Only for a run
whose own log shows it did not learn (never_learned, no_learning_evidence), and only where the method and objective
are known (a DPO rate is a hundredth of an SFT one: an unknown objective cannot place it).
"""
from __future__ import annotations

import numpy as np

from ..findings import Cause
from ..analyzers.metrics import format_rate
from .evidence import Facts, lr_points, peak_lr, still_rising
from .lr_ranges import LrRange
from .lr_words import (continued_from, for_objective, method_name, no_adapters, profile_of, ranges_in_words, run_name,
                       run_ranges)

TOO_LOW = 3.0   # a peak this many times under the bottom of the range is out of every recipe for the run's kind
FAR_UNDER = 5.0  # and this many times under it, with the run broken, the rate is the likely cause
_NOT_LEARNING = ("never_learned", "no_learning_evidence")
MIN_POINTS = 3  # a stall is read from a level and the points that stay at it: one or two logged losses show neither


def lr_too_low(facts: Facts) -> Cause | None:
    """Peak learning rate `TOO_LOW` times or more under the range recipes use for this run's method, objective and
    size, in a run that did not learn. An unknown method is judged against the lower of the two ranges (full
    fine-tuning's), so that an adapter's rate is never called too low for a run that may have trained every weight."""
    stalled = facts.of_kind(*_NOT_LEARNING)
    if not stalled or _no_gradient(facts) or _too_few_points(facts) or _stopped_in_warm_up(facts):
        return None
    method, objective, n_params = profile_of(facts)
    if objective == "unknown" or (objective == "pretrain" and method != "full"):
        return None
    peak, where = peak_lr(facts)
    ranges = run_ranges(facts)
    bottom = min(r.low for r in ranges)
    if peak is None or peak <= 0 or peak * TOO_LOW > bottom:
        return None
    likely = facts.broken and method != "unknown" and peak * FAR_UNDER <= bottom
    return Cause(
        cause="lr_too_low", confidence="likely" if likely else "possible",
        evidence=list(where) + [c for c in [continued_from(facts)] if c] + [
            _against_recipes(method, objective, ranges, peak), f"{stalled[0].kind} from step {stalled[0].step}"],
        suggestion=_advice(method, objective, ranges),
        title=(f"Learning rate {format_rate(peak)} {'far ' if likely else ''}under the range recipes use for "
               f"{run_name(method, objective, n_params)}"),
    )


def _too_few_points(facts: Facts) -> bool:
    loss = facts.series("loss").to_numpy(dtype="float64")
    return int(np.isfinite(loss).sum()) < MIN_POINTS


def _stopped_in_warm_up(facts: Facts) -> bool:
    """The logged rate was still climbing at the log's last point: the run stopped before its warm-up ended, so the
    rate it ran at says nothing of the rate it was set to reach (that it did not learn in a few warm-up steps is no
    evidence of a rate too low)."""
    return still_rising(lr_points(facts.timeline))


def _no_gradient(facts: Facts) -> bool:
    """grad_norm logged and 0 at every point: nothing reached the weights, at any rate (the frozen-weights and
    zero-gradient rules speak to that)."""
    grad = facts.series("grad_norm")
    values = grad.to_numpy(dtype="float64")
    finite = values[np.isfinite(values)]
    return len(finite) > 0 and bool((finite == 0.0).all())


def _against_recipes(method: str, objective: str, ranges: list[LrRange], peak: float) -> str:
    shown = " and ".join(f"{r.describe()} ({r.source})" for r in ranges)
    # a preference or RL range names its objective (`for_objective`): "recipes for LoRA use 5e-06 to 5e-05" read as
    # LoRA's range in AnnieL66's DPO
    what = (f"fine-tuning method unknown: recipes for {for_objective('full fine-tuning and adapters', objective)} use"
            if method == "unknown" else f"recipes for {for_objective(method_name(method, objective), objective)} use")
    if no_adapters(ranges):  # a recurrent network has no adapters, and its one row holds whatever the method
        what, shown = "recipes for a recurrent network use", f"{ranges[0].describe()} ({ranges[0].source})"
    return f"{what} {shown}; the peak is {min(r.low for r in ranges) / peak:.0f}x under the bottom of that"


def _advice(method: str, objective: str, ranges: list[LrRange]) -> str:
    target = ("the recipes' range: " if method == "unknown" else "") + \
        ranges_in_words(method, objective, ranges, unknown="(the method is unknown)")
    # a classifier's loss is over its labels, not tokens: "the right tokens" is a language model's check
    computed_on = "the right labels" if objective == "classification" else "the right tokens"
    return (f"Raise the learning rate to {target}; check first that the loss is computed on {computed_on} and the "
            "weights meant to train are trainable.")
