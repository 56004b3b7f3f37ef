"""Memorization read from a staircase at the epoch boundaries, whatever the loss level.

After a first pass that learns on examples seen for the first time, a training loss that then falls only where the
data comes round again -- in one logging interval at each later pass's start, by more than the whole first pass fell
-- and stays flat inside the passes is getting better on the examples it has seen before, not at the task: the
training set learned by heart (`memorization`, VERDICTS.md), at 2 nats as at 0.02.
`memorization.memorized_in_a_staircase` names a staircase once its passes get under 0.2 nats; this one reads the shape
alone, and only where nothing held out can show the run generalises: no eval loss, or one that falls inside the flat
passes as the training set scored again does (each example the pass shows again gets easier; held-out text would stay as
flat as the training loss). `collapse.detect_loss_collapse` calls it where nothing else found memorization. A reward
model's memorization over such passes is dated where the pairs come round again (`dated_at_the_pairs_return`, for
`run_findings`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..findings import Finding
from .memorization import falls_at_epoch_starts, held_out_loss_names, pass_edges, whole_passes
from .metrics import LOSS, Metrics, epoch_at, finite, format_number, real_loss

# Each drop at a pass start is this many times the point-to-point noise inside the later passes or more: a step, not a
# wobble (the two GPT-2 runs on raw text, 15x and 17x; yc1999's Alpaca SFT logged every step, judged healthy, 9.6x)
CLEAR_STEP = 10.0
FLAT_INSIDE = 0.25  # a later pass falls inside itself by no more than this share of the drop that opened it
# an eval loss that falls inside each flat pass this many times more than the training loss, and by this share of the
# drop that opened the pass at least, scores the examples the pass shows again (anishamahuli's eval_dataset = the
# training set: 2.91 -> 2.27 inside its second pass, where the training loss went 3.04 -> 2.97)
_EVAL_FALLS = 3.0
_EVAL_SHARE = 0.25
_PAST = 1e-6  # an epoch this far past a whole number is past the boundary (a point at 1.0 closes the first pass)


@dataclass(frozen=True)
class Staircase:
    """A log's whole passes over its data (`memorization.whole_passes`), each pass's (start, end) level, the level the
    first pass began at (its first point, or its first levels' median if higher) and the point-to-point noise (the
    median absolute change between neighbouring points inside the later passes)."""

    passes: list[float]
    edges: list[tuple[float, float]]
    head: float
    noise: float

    @property
    def drops(self) -> list[float]:
        """The fall at each later pass's start: the pass before's end level less this pass's start level."""
        return [end - start for (_, end), (start, _) in zip(self.edges, self.edges[1:])]

    @property
    def inside(self) -> list[float]:
        """How far each later pass falls inside itself (start level less end level)."""
        return [start - end for start, end in self.edges[1:]]

    @property
    def first_fall(self) -> float:
        """The whole first pass's fall, from where it began to its end level: what examples seen once gave."""
        return self.head - self.edges[0][1]


def staircase(loss: pd.Series, epochs: pd.Series) -> Staircase | None:
    """The log's `Staircase`, or None where it shows no first pass (a log kept from a later epoch) and two more."""
    epoch_of, passes = whole_passes(loss, epochs)
    if len(passes) < 3 or passes[0] != 0:
        return None
    values = loss.to_numpy()
    edges = pass_edges(loss, epoch_of, passes)
    changes = np.concatenate([np.abs(np.diff(values[epoch_of == e])) for e in passes[1:]])
    return Staircase(passes, edges, max(float(values[epoch_of == passes[0]][0]), edges[0][0]),
                     float(np.median(changes)))


def memorizing(stairs: Staircase) -> bool:
    """The staircase of a model learning its examples by heart: the first drop larger than the whole first pass's
    fall (seeing the examples again gives more than seeing them first did), every drop `CLEAR_STEP` x the noise or
    more, and every later pass flat inside (`FLAT_INSIDE`). yc1999's Alpaca SFT (judged healthy: the drop each epoch
    boundary of a multi-epoch SFT shows) falls 1.50 -> 1.05 over its first pass, more than its drops of 0.36."""
    drops = stairs.drops
    return drops[0] >= stairs.first_fall and all(d > 0 and d >= CLEAR_STEP * stairs.noise for d in drops) \
        and all(fall <= FLAT_INSIDE * d for fall, d in zip(stairs.inside, drops))


def falls_inside_flat_passes(evals: pd.Series, epochs: pd.Series, stairs: Staircase) -> bool:
    """Whether an eval loss falls inside each later pass (between its first and last evaluation there, two or more)
    `_EVAL_FALLS` x more than the training loss and by `_EVAL_SHARE` of the drop that opened the pass: it moves with
    the examples the pass shows again, as the training set scored again does; held-out text cannot get easier while
    the training loss on examples seen before stays flat."""
    epoch = np.array([epoch_at(epochs, int(step)) for step in evals.index], dtype="float64")
    for e, fall, drop in zip(stairs.passes[1:], stairs.inside, stairs.drops):
        inside = evals.to_numpy()[(np.floor(epoch) == e) & (epoch > e + _PAST)]
        if len(inside) < 2 or inside[0] - inside[-1] < max(_EVAL_FALLS * max(fall, 0.0), _EVAL_SHARE * drop):
            return False
    return True


def memorized_at_the_epoch_starts(metrics: Metrics) -> list[Finding]:
    """A `memorization` warning where the training loss is a memorizing staircase (`memorizing`) and no eval loss
    holds out examples (none, or each falls inside the flat passes: `falls_inside_flat_passes`), dated at the first
    point past the first pass: where the examples come round again. [] otherwise."""
    if LOSS not in metrics or "epoch" not in metrics or not len(epochs := finite(metrics["epoch"])):
        return []
    loss = real_loss(metrics)
    stairs = staircase(loss, epochs)
    if stairs is None or not falls_at_epoch_starts(loss, epochs) or not memorizing(stairs):
        return []
    held = held_out_loss_names(metrics)
    if any(not falls_inside_flat_passes(finite(metrics[name]), epochs, stairs) for name in held):
        return []
    return [_finding(loss, epochs, stairs, held)]


def _finding(loss: pd.Series, epochs: pd.Series, stairs: Staircase, evals: list[str]) -> Finding:
    """The warning, dated at the first point past each boundary (the first of them its step)."""
    past = [_first_point_past(loss, epochs, e) for e in stairs.passes[1:]]
    drops = ", ".join(f"by {format_number(d)} at step {s}" for d, s in zip(stairs.drops, past))
    # the later passes only: the first pass's fall is said just before, from its first point
    levels = ", ".join(f"{format_number(start)} -> {format_number(end)}" for start, end in stairs.edges[1:])
    held = ("no eval loss was logged" if not evals else
            f"its {evals[0]} falls inside those flat passes as the training set scored again would (each example the "
            "pass shows again gets easier; held-out text would stay as flat), so it cannot show generalisation")
    message = (f"the loss falls in one step where the data comes round again ({drops}), each drop more than "
               f"{format_number(CLEAR_STEP)}x the noise between points and the first larger than the whole first "
               f"pass's fall ({format_number(stairs.head)} -> {format_number(stairs.edges[0][1])}, on examples seen "
               f"for the first time), and stays flat inside the later passes (each pass's start -> end: {levels}), "
               f"and {held}: the model gets better on the examples it has seen before, not at the task, so the "
               "training data is being learned by heart (memorization). Evaluate on held-out examples to see how "
               "much of the gain generalises; fewer epochs or more data if it does not.")
    return Finding("memorization", "warning", past[0], message, end_step=int(loss.index[-1]), metric=LOSS, evidence={
        "value": stairs.edges[-1][1], "eval_loss_logged": bool(evals), "to_end": True, "settled_step": past[0],
        "epoch": float(stairs.passes[1]), "drops": stairs.drops, "first_pass_fall": stairs.first_fall,
        "noise": stairs.noise, "staircase": True})


def _first_point_past(loss: pd.Series, epochs: pd.Series, epoch: float) -> int:
    """The step of the first loss point logged past `epoch` (the first that shows examples of the pass after it)."""
    return next(int(s) for s in loss.index if (epoch_at(epochs, int(s)) or 0.0) > epoch + _PAST)


def dated_at_the_pairs_return(found: Finding, metrics: Metrics) -> Finding:
    """A reward model's memorization, where its pairwise loss falls at the epoch starts (`falls_at_epoch_starts`, the
    first drop a fall), dated at the first point past the first pass, where the pairs come round again: a pair it
    scores better on sight is one it recognises, and a pairwise loss has no level that says memorized the way a
    per-token loss does (AimeeAyat_ATML-PA5's Qwen3 reward model: 0.539 -> 0.396 at step 3300, the first point of
    epoch 2, its accuracy 0.71 -> 0.92; the many-epochs level dated it at 6600, under 0.1 after the second drop)."""
    if found.kind != "memorization" or LOSS not in metrics or "epoch" not in metrics \
            or not len(epochs := finite(metrics["epoch"])):
        return found
    loss = real_loss(metrics)
    stairs = staircase(loss, epochs)
    if stairs is None or not falls_at_epoch_starts(loss, epochs) or not stairs.drops[0] > 0:
        return found
    step = _first_point_past(loss, epochs, stairs.passes[1])
    if step >= found.step:
        return found
    message = (f"{found.message} Dated from step {step}, the first point of the second pass: the pairwise loss drops "
               "there, where the pairs come round again (the model recognises pairs it has seen).")
    return replace(found, step=step, message=message, evidence={**found.evidence, "pairs_return_step": step,
                                                                "rule_step": found.step})
