"""The step axes of one TensorBoard event file, made one: per-epoch counters continued, epoch-indexed tags placed.

One event file is one writer (its name carries the writer's start time, host and pid; a resumed process opens a new
file), and its wall time runs on. So within one file:

* a tag whose step goes back to its first step again and again, each time after the same span, is a counter the
  script restarts each epoch (`writer.add_scalar("Loss/train", loss, batch_idx)`), not a resume: its steps are read
  as one continuous count, each restart offset by the count before it (`continued_epoch_counters`);
* a tag logged at the epoch index (`writer.add_scalar("Loss/val", val_loss, epoch)`: steps 0..9) beside a training
  loss logged per batch (steps into the hundreds or more) counts epochs on an axis that counts batches; where its
  wall times spread over the training loss's, each of its points goes to the training step logged last at or before
  its wall time: the model it measured (`epoch_indexed_tags_on_train_steps`); where its wall times do not (a
  script that writes the epochs' values after training) and the training loss was a per-epoch counter, the
  counter's restarts say where each epoch ended, and epoch k's point goes to its end (`_epoch_indexed_at_epoch_ends`).

`one_step_axis` does all of it, in that order; each step says what it did in a note. A single restart (a re-run in
a notebook's same writer, or a second epoch) is left as it is: the two cannot be told apart. Restarts where the
training loss goes back to where it began (a fresh model: the loop re-run from scratch, as many times as the user
ran the cell) are re-runs, left as attempts of their own; a per-epoch counter's loss carries on at each restart.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..restarts import back_at_the_start

# A per-epoch counter restarts at least this often (three epochs or more); one restart may be a re-run.
MIN_RESTARTS = 2
# A re-run's first values are told by `restarts.back_at_the_start`, each end a level (the median of LEVEL_POINTS
# values at each end: a tag's single points are noisy), and the first run moved by MIN_MOVE of its level at least: a
# flat loss restarting says nothing.
LEVEL_POINTS = 5
MIN_MOVE = 0.1
# The completed epochs of a per-epoch counter end within this fraction of their span of one another.
SPAN_TOLERANCE = 0.1
# An epoch-indexed tag's largest step (a few dozen epochs at most), and how many times further the training loss's
# steps must run for the two to be different axes.
MAX_EPOCH_INDEX = 50
MIN_AXIS_RATIO = 10
# A training loss logged per step runs to hundreds of steps at least.
MIN_TRAIN_STEPS = 100
# The epoch-indexed tag's wall times cover at least this fraction of the training loss's wall-time span.
MIN_WALL_COVER = 0.5


def one_step_axis(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The frame of one event file on one step axis (see the module docstring), and notes saying what moved."""
    continued, counter_notes = continued_epoch_counters(frame)
    placed, wall_notes = epoch_indexed_tags_on_train_steps(continued)
    at_ends, end_notes = _epoch_indexed_at_epoch_ends(frame, placed)
    return at_ends, counter_notes + wall_notes + end_notes


def continued_epoch_counters(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The frame with each per-epoch counter tag's steps made one continuous count, and a note naming the tags.

    A tag is a per-epoch counter where, in file order, its step goes back MIN_RESTARTS times or more, always to the
    tag's first step, and its completed pieces end at about the same step (see the module docstring).
    """
    reruns = _tags_run_again_from_scratch(frame)
    # one loop logs every tag: where its training loss was run again from scratch, so was everything beside it
    if "loss" in reruns:
        return frame, ()
    return _restepped(frame, lambda metric, steps, wall: None if metric in reruns else _continued_count(steps), (
        "{tags}: the step goes back to its first value again and again within this one event file (one writer, its "
        "wall time running on): a counter restarted each epoch, not a resume; read as one continuous count, each "
        "restart offset by the count before it"))


def _restepped(frame: pd.DataFrame, new_steps, note: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The frame with each tag's steps replaced by `new_steps(metric, steps, wall_times)` where that gives an array
    (None: left as they are), and `note` with {tags} naming the tags that changed (no note where none did)."""
    steps, wall = frame["step"].to_numpy().copy(), frame["wall_time"].to_numpy(dtype="float64")
    changed = []
    for metric, rows in frame.groupby("metric", sort=False).indices.items():
        replaced = new_steps(metric, steps[rows], wall[rows])
        if replaced is not None:
            steps[rows] = replaced
            changed.append(metric)
    if not changed:
        return frame, ()
    return frame.assign(step=steps), (note.format(tags=", ".join(changed)),)


def _tags_run_again_from_scratch(frame: pd.DataFrame) -> set[str]:
    """The tags whose step restarts are re-runs of the training from scratch (`_started_over`), not epochs."""
    steps, values = frame["step"].to_numpy(), frame["value"].to_numpy(dtype="float64")
    return {metric for metric, rows in frame.groupby("metric", sort=False).indices.items()
            if _started_over(steps[rows], values[rows])}


def _started_over(steps: np.ndarray, values: np.ndarray) -> bool:
    """Whether, at some restart of the step, the values went back to where the first piece began: a fresh model's
    level, nearer the first piece's first values than to both the previous piece's last values and the lowest the
    run had reached (`restarts.back_at_the_start`). A per-epoch counter's next epoch carries on from where the last
    one ended. Compared as the values are, not as ratios: any tag is asked (a reward may be 0 or below)."""
    pieces = np.split(values, np.flatnonzero(np.diff(steps) < 0) + 1)
    first_start = _level(pieces[0], head=True)
    for k in range(1, len(pieces)):
        start, before = _level(pieces[k], head=True), np.concatenate(pieces[:k])
        previous_end = _level(before, head=False)  # the last finite values before the restart
        reached = np.nanmin(before) if np.isfinite(before).any() else np.nan
        if not np.isfinite([first_start, start, previous_end, reached]).all():
            continue
        moved = abs(first_start - previous_end) > MIN_MOVE * max(abs(first_start), abs(previous_end))
        if moved and back_at_the_start(start, first_start, (previous_end, reached)):
            return True
    return False


def _level(values: np.ndarray, head: bool) -> float:
    """The median of the first (head) or last LEVEL_POINTS finite values; NaN where there are none."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return np.nan
    return float(np.median(finite[:LEVEL_POINTS] if head else finite[-LEVEL_POINTS:]))


def _continued_count(steps: np.ndarray) -> np.ndarray | None:
    """One tag's steps (file order) as a continuous count, or None where they are not a per-epoch counter."""
    restarts = np.flatnonzero(np.diff(steps) < 0) + 1
    if len(restarts) < MIN_RESTARTS:
        return None
    pieces = np.split(steps, restarts)
    first = steps[0]
    if any(piece[0] != first for piece in pieces):
        return None
    ends = np.array([piece.max() for piece in pieces[:-1]])
    span = ends.max() - first
    if span <= 0 or ends.max() - ends.min() > SPAN_TOLERANCE * span or pieces[-1].max() > ends.max():
        return None
    gaps = np.diff(steps)
    gap = int(np.median(gaps[gaps > 0])) if (gaps > 0).any() else 1
    out, offset = [], 0
    for piece in pieces:
        out.append(piece + offset)
        offset = int(out[-1].max()) + gap - first
    return np.concatenate(out)


def epoch_indexed_tags_on_train_steps(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The frame with each epoch-indexed tag's points moved to the training step logged last at or before their
    wall time, and a note naming the tags (see the module docstring). Without a per-step training loss, or wall
    times, the frame comes back as it is."""
    train = frame[frame["metric"] == "loss"]
    train_wall = train["wall_time"].to_numpy(dtype="float64")
    if train.empty or train["step"].max() < MIN_TRAIN_STEPS or not np.isfinite(train_wall).all():
        return frame, ()
    order = np.argsort(train_wall, kind="stable")
    train_wall, train_steps = train_wall[order], train["step"].to_numpy()[order]

    def on_train_steps(metric, steps, wall):
        if metric == "loss" or not _epoch_indexed(steps, wall, train):
            return None
        # the last training step before the evaluation's wall time: the model it measured (an epoch's evaluation
        # runs after its last batch, and may take long enough to sit nearer the next epoch's first)
        return train_steps[np.maximum(np.searchsorted(train_wall, wall, side="right") - 1, 0)]

    return _restepped(frame, on_train_steps, (
        f"{{tags}}: logged at the epoch index (steps up to {MAX_EPOCH_INDEX} or fewer) beside a training loss logged "
        f"per step; each point placed at the training step logged last at or before its wall time"))


def _epoch_indexed_at_epoch_ends(before: pd.DataFrame, frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Where the training loss was a per-epoch counter (its steps in `before` restart, in `frame` continued), each
    tag still counting epochs (rising steps 0..E-1, 1..E, or 0..E with an evaluation before training, for E epochs
    the counter shows) placed at the last training step of its epoch (`_epoch_index_steps`)."""
    loss_before = before["step"].to_numpy()[before["metric"].to_numpy() == "loss"]
    loss_now = frame["step"].to_numpy()[frame["metric"].to_numpy() == "loss"]
    if len(loss_now) == 0 or (loss_before == loss_now).all():
        return frame, ()
    ends = np.append(loss_now[np.flatnonzero(np.diff(loss_before) < 0)], loss_now[-1])

    def at_epoch_end(metric, steps, wall):
        if metric == "loss" or len(steps) < 2 or (np.diff(steps) <= 0).any() or steps.min() < 0 \
                or steps.max() > len(ends):
            return None
        return _epoch_index_steps(steps, ends, int(loss_now.min()))

    return _restepped(frame, at_epoch_end, (
        "{tags}: logged at the epoch index beside a training loss whose step counter restarts each epoch; each point "
        "placed at the last training step of its epoch (the file's wall times, all after training, do not place it)"))


def _epoch_index_steps(epochs: np.ndarray, ends: np.ndarray, first_step: int) -> np.ndarray:
    """The training steps of epoch indices (rising, 0..len(ends) at most), given the last step of each epoch.

    Indices that reach len(ends) count epochs from 1: index k is the end of epoch k, and an index 0 beside them is
    an evaluation before training, at `first_step` (index 0 must never wrap round to the last epoch's end).
    Indices below len(ends) count from 0: index k is the end of the (k+1)-th epoch.
    """
    if epochs.max() < len(ends):
        return ends[epochs]
    return np.where(epochs == 0, first_step, ends[np.maximum(epochs - 1, 0)])


def _epoch_indexed(steps: np.ndarray, wall: np.ndarray, train: pd.DataFrame) -> bool:
    """Whether one tag's points count epochs beside the training loss `train`: a few, rising, small steps far below
    the training loss's, whose wall times spread over the training loss's wall-time span."""
    if len(steps) < 2 or not np.isfinite(wall).all() or (np.diff(steps) <= 0).any():
        return False
    if steps.max() > MAX_EPOCH_INDEX or steps.max() * MIN_AXIS_RATIO > train["step"].max():
        return False
    first, last = float(train["wall_time"].min()), float(train["wall_time"].max())
    per_epoch = (last - first) / len(steps)
    inside = (wall >= first) & (wall <= last + per_epoch)
    return bool(inside.all()) and wall.max() - wall.min() >= MIN_WALL_COVER * (last - first)
