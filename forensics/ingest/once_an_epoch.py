"""Where a loop's once-an-epoch lines (kind "generic_epoch") go among the console's step lines (`step_numbering`):
at step 1, 2, ... by their epoch, beside step lines at the epoch's last step, or, printed once a batch, one step a line.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from .console_lines.fields import StepLine
from .stepless_dating import BEFORE_TRAINING


# Once-an-epoch records of a shape no prose has (console_lines.epoch_costs' `--- Epoch #0 finished --- Training cost:
# X`; console_lines.lightning_results' validation blocks): read however few the file holds
# (jonathanbgn_slogan-generator's two epochs print two, each of joaorafaelm_notebooks' Lightning trainings two
# validations)
_SHAPED_EPOCH_KINDS = ("epoch_cost", "lightning_results")


def shaped_epoch_lines(events: list[tuple]) -> list[tuple]:
    """The records of `_SHAPED_EPOCH_KINDS` as once-an-epoch lines (kind "generic_epoch"), past the stray-line rule."""
    return [("line", replace(e[1], kind="generic_epoch")) if e[0] == "line" and e[1].kind in _SHAPED_EPOCH_KINDS
            else e for e in events]


def epoch_lines_placed(events: list[tuple]) -> list[tuple]:
    """Once-an-epoch lines (kind "generic_epoch") at step 1, 2, ... (E + 1 for a loop that counts epochs from 0, else
    E as printed: a log that starts at epoch 3442, a pasted excerpt, keeps the run's own epochs), their epoch the
    epochs done when it printed (E - the first epoch + 1), or, in a log that also has step lines, at the last step
    seen before them with their held-out metrics only (the step lines hold the training loss and epoch; an epoch's
    mean would be a second value there)."""
    epochs = [dict(e[1].metrics)["epoch"] for e in events if e[0] == "line" and e[1].kind == "generic_epoch"]
    if not epochs:
        return events
    first = min(epochs)
    stepped = any(e[0] == "line" and e[1].kind not in ("generic_epoch", "held_out_print", BEFORE_TRAINING)
                  for e in events)
    if not stepped and _printed_each_batch(events):
        return _batch_lines_numbered(events, first)
    out, last = [], 0
    for event in events:
        record = event[1] if event[0] == "line" else None
        if record is not None and record.kind != "generic_epoch":
            last = record.step
        elif record is not None:
            done = dict(record.metrics)["epoch"] - first + 1
            metrics = tuple((k, done if k == "epoch" else v) for k, v in record.metrics
                            if not stepped or k.startswith("eval_"))
            if not metrics:
                continue  # a training loss alone, beside step lines that hold it already
            printed = dict(record.metrics)["epoch"] - min(first, 1) + 1
            event = ("line", StepLine(record.kind, last if stepped else int(printed), None, metrics, record.cut))
        out.append(event)
    return out


def _training_epoch_lines(events: list[tuple]) -> list[int]:
    """Indexes of the epoch-only lines (kind "generic_epoch") that hold a training metric, not only held-out ones."""
    return [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "generic_epoch"
            and any(k != "epoch" and not k.startswith("eval_") for k, _ in e[1].metrics)]


def _printed_each_batch(events: list[tuple]) -> bool:
    """Whether a loop printed its epoch-only training line once a batch, not once an epoch: most epochs hold two or
    more of them (`Epoch 0, Loss: 1.0078` a batch, as a hand-written loop prints it), not one."""
    per_epoch = Counter(dict(events[i][1].metrics)["epoch"] for i in _training_epoch_lines(events))
    return len(per_epoch) > 0 and float(np.median(list(per_epoch.values()))) >= 2


def _batch_lines_numbered(events: list[tuple], first: float) -> list[tuple]:
    """Epoch-only lines printed once a batch at steps 1, 2, ... in file order (each line a batch, the loop's own
    count); their epoch the epochs done, the n-th of an epoch's k lines at (E - the first epoch) + n / k, as the HF
    Trainer logs it; an epoch's held-out line at the last batch printed before it. Where the epoch goes back (the
    run started again) the count starts again from 1: the timeline takes the later attempt as a resume."""
    training = _training_epoch_lines(events)
    attempt_of = _attempts(events, training)
    per_epoch = Counter((attempt_of[i], dict(events[i][1].metrics)["epoch"]) for i in training)
    out, step, seen, attempt = [], 0, Counter(), 0
    for i, event in enumerate(events):
        if event[0] == "line" and event[1].kind == "generic_epoch":
            record = event[1]
            epoch = dict(record.metrics)["epoch"]
            if i in attempt_of:
                if attempt_of[i] != attempt:  # a new attempt counts its batches from 1 again: the timeline's resume
                    attempt, step = attempt_of[i], 0
                step += 1
                seen[attempt, epoch] += 1
            key = (attempt, epoch)
            done = epoch - first + (seen[key] / per_epoch[key] if per_epoch[key] else 1.0)
            metrics = tuple((k, done if k == "epoch" else v) for k, v in record.metrics)
            event = ("line", StepLine(record.kind, step, None, metrics, record.cut))
        out.append(event)
    return out


def _attempts(events: list[tuple], training: list[int]) -> dict[int, int]:
    """Each training line's attempt, 0, 1, ...: a new one where the epoch goes back (a run started again)."""
    out, attempt, last = {}, 0, None
    for i in training:
        epoch = dict(events[i][1].metrics)["epoch"]
        if last is not None and epoch < last:
            attempt += 1
        out[i], last = attempt, epoch
    return out
