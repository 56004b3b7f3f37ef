"""Whether a log's first point is the run's first step, where the reader numbered its lines.

Printed Trainer dicts carry no step; where nothing else dates them (no bar, no stated logging interval: the
`BY_ORDER` rule) the reader numbers them 1, 2, 3 ... A paste that begins mid-run then has a "step 1" that is only its
own first line, and what is said of the run's first step (its loss and gradient computed on the weights as loaded,
before any update) is not true of it. The lines' own values place their first one: a learning rate of 0 there, a
warm-up that climbs to it from 0 in one of its own steps, epochs that start within one of their spacings of 0.
SY-Xuan_Pink_issue6 (the rate 1.214e-4 at its first line, 7.14e-6 more a line: 17 lines into the warm-up) and
Time-MoE_issue31 (epoch 0.54 at its first line, 0.013 a line) were told they broke before any update.
"""
from __future__ import annotations

import numpy as np

from ..ingest.console_steps import numbered_by_order
from ..restarts import epoch_past_the_start
from ..timeline import Timeline

# a warm-up's first logged rate at most this many of its own steps above 0 starts with the run (one step, plus the
# rounding of a printed rate)
_RAMP_STEPS_AT_THE_START = 1.5
# a warm-up is traced back only where it is a straight line: its second rise within this share of its first (a
# printed rate's rounding); a log-shaped one (DeepSpeed WarmupLR's default) rises less each line and, drawn straight
# back from its first two lines, would begin before the run did
_SAME_RISE = 0.1


def start_unshown(timeline: Timeline) -> str | None:
    """Why the log's first point is not shown to be the run's first step, where its lines were numbered by their order
    alone and their own learning rate and epoch do not place the first at the start; None where they do, or where the
    log dates its own points."""
    if not _numbered_by_order(timeline):
        return None
    against = _past_the_start(timeline)
    if against is not None:
        return against
    if _rate_starts_at_zero(timeline) or _epochs_start_at_zero(timeline):
        return None
    return ("the printed lines carry no step and nothing in them (a learning rate of 0 or a warm-up from 0, an epoch "
            "near 0) places the first of them at the run's start")


def _numbered_by_order(timeline: Timeline) -> bool:
    """Whether the log that holds the run's first logged point had its lines numbered by their order alone."""
    rows = timeline.final()
    if rows.empty:
        return False
    first = rows[rows["step"] == rows["step"].min()]
    return any(numbered_by_order(timeline.meta.get(source, {}).get("step_inferred"))
               for source in first["source"].unique())


def _points(timeline: Timeline, metric: str) -> np.ndarray:
    values = timeline.series(metric).to_numpy(dtype="float64")
    return values[np.isfinite(values)]


def _past_the_start(timeline: Timeline) -> str | None:
    """A sentence saying where the lines' own epoch or learning rate puts their first line after the run's start."""
    epoch = _points(timeline, "epoch")
    spacing = (epoch[-1] - epoch[0]) / (len(epoch) - 1) if len(epoch) >= 2 else 0.0
    if spacing > 0 and epoch_past_the_start(float(epoch[0]), spacing):
        return (f"the first printed line is at epoch {epoch[0]:g}, {spacing:.2g} of an epoch a line: the paste begins "
                "mid-run")
    lr = _points(timeline, "learning_rate")
    if len(lr) >= 2 and 0 < lr[1] - lr[0] and lr[0] > _RAMP_STEPS_AT_THE_START * (lr[1] - lr[0]) and _linear(lr):
        return (f"the learning rate climbs {lr[1] - lr[0]:.3g} a line from {lr[0]:.4g} at the first printed line: "
                f"its warm-up began about {lr[0] / (lr[1] - lr[0]):.0f} lines before it")
    return None


def _linear(lr: np.ndarray) -> bool:
    """Whether the rate's first rises are the same (`_SAME_RISE`); two lines are taken as a straight line."""
    return len(lr) < 3 or abs((lr[2] - lr[1]) - (lr[1] - lr[0])) <= _SAME_RISE * (lr[1] - lr[0])


def _rate_starts_at_zero(timeline: Timeline) -> bool:
    lr = _points(timeline, "learning_rate")
    return len(lr) >= 1 and (lr[0] == 0.0 or (len(lr) >= 2 and lr[1] > lr[0] > 0))


def _epochs_start_at_zero(timeline: Timeline) -> bool:
    epoch = _points(timeline, "epoch")
    return len(epoch) >= 2 and epoch[-1] > epoch[0]
