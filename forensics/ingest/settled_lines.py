"""The step lines of a scanned console settled: each once, at the step of the run it belongs to.

`settled(events)` runs, in order: loss lines under epoch section headers dated by them (`stepless_dating`), scalar
tensor prints dated by the progress bar before each (`bar_dated_prints`), lines that print no step numbered in file
order (`step_numbering`), the copies every rank prints dropped, tqdm postfix lines numbered on across restarting bars
and kept where they changed, NeMo 2's repeated validation values kept once, and counters that restart each epoch
numbered on (`step_numbering`).
"""
from __future__ import annotations

import math
from dataclasses import replace

from .bar_dated_prints import prints_dated_by_their_bar
from .console_lines.fields import StepLine
from .step_numbering import numbered_on, uncounted_lines_numbered
from .stepless_dating import headed_lines_dated


def settled(events: list[tuple], one_cell: bool = False) -> list[tuple]:
    """The scanned events with their step lines settled (module docstring); `one_cell`: they are what one notebook
    cell's code printed, so a short hand-written block is its loop's log (`step_numbering.numbered_on`)."""
    return numbered_on(_nemo2_evaluations_once(_tqdm_postfix_changes(_without_rank_copies(
        uncounted_lines_numbered(prints_dated_by_their_bar(headed_lines_dated(events)))))), one_cell)


def _nemo2_evaluations_once(events: list[tuple]) -> list[tuple]:
    """NeMo 2.0's progress printer repeats the last validation's `val_loss` on every training line after it (a
    progress-bar metric): an eval value is kept where it changes, not where it is printed again. Before the first
    validation it was never there, so the first line after it averages it over part of the interval (0.975 for a
    val_loss of 1.95): a first value under the next line's is that partial average, left out."""
    lines = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "nemo2"]
    if not lines:
        return events
    out = list(events)
    kept: dict[str, float] = {}
    for at, i in enumerate(lines):
        record: StepLine = events[i][1]
        following = dict(events[lines[at + 1]][1].metrics) if at + 1 < len(lines) else {}
        metrics = []
        for name, value in record.metrics:
            if name.startswith("eval_"):
                partial = name not in kept and following.get(name, value) > value
                if partial or kept.get(name) == value:
                    kept.setdefault(name, math.nan)  # (a NaN is no value: the next line's is kept)
                    continue
                kept[name] = value
            metrics.append((name, value))
        out[i] = ("line", replace(record, metrics=tuple(metrics)))
    return out


def _tqdm_postfix_changes(events: list[tuple]) -> list[tuple]:
    """tqdm postfix lines numbered on across a bar that restarts (each epoch, with or without `Epoch E` in its
    label: (epoch - the first epoch) x total + n, or the totals of the bars before it + n), and kept where the
    postfix changed: each redraw repeats the last value set. A value that never changes is all the log has, so
    then every redraw is kept (a loss stuck at 0.0 for 300 steps is 300 points, not one)."""
    postfix = [e[1] for e in events if e[0] == "line" and e[1].kind == "tqdm_postfix"]
    if not postfix:
        return events
    first_epoch = min((dict(r.metrics)["epoch"] for r in postfix if "epoch" in dict(r.metrics)), default=None)
    values_of = [tuple(pair for pair in r.metrics if pair[0] != "epoch") for r in postfix]
    keep_all = len(set(values_of)) <= 2
    out: list[tuple] = []
    last: dict = {}  # per bar (its total): the last values kept, the last n, the steps of the passes before
    last_n: dict = {}
    offset: dict = {}
    trained_to: dict = {}  # epoch (or _LAST) -> the last training step its bar reached
    for event in events:
        if event[0] == "line" and event[1].kind == "tqdm_postfix":
            record: StepLine = event[1]
            bar = record.total
            values = tuple(pair for pair in record.metrics if pair[0] != "epoch")
            epoch = dict(record.metrics).get("epoch")
            if epoch is None and bar and record.step < last_n.get(bar, 0):
                offset[bar] = offset.get(bar, 0) + bar  # the bar started over: the next pass
            last_n[bar] = record.step
            if epoch is not None and bar:
                event = ("line", replace(record, step=int((epoch - first_epoch) * bar) + record.step))
            elif offset.get(bar):
                event = ("line", replace(record, step=offset[bar] + record.step))
            event = _evaluation_placed(event, trained_to, epoch)  # (a redraw left out below still says where it is)
            if (values, epoch) == last.get(bar) and not keep_all:  # (another epoch's pass is no redraw)
                continue
            last[bar] = (values, epoch)
        elif event[0] == "line" and event[1].kind == "generic_epoch" and trained_to:
            event = _evaluation_placed(event, trained_to, dict(event[1].metrics).get("epoch"))
        out.append(event)
    return out


def _evaluation_placed(event: tuple, trained_to: dict, epoch: float | None) -> tuple:
    """An evaluation's record (a validation bar's, or an `Epoch: E, Validation Loss: X` line) at the training step
    its epoch's bar reached, not at its own count of eval batches or epochs; a training record is noted as the
    step its epoch reached."""
    record: StepLine = event[1]
    evaluated = all(name.startswith("eval_") for name, _ in record.metrics if name != "epoch")
    if not evaluated:
        trained_to[epoch] = trained_to[_LAST] = record.step
        return event
    if epoch in trained_to or (epoch is None and _LAST in trained_to):  # (an `Evaluating` bar names no epoch)
        return ("line", replace(record, step=trained_to[epoch if epoch is not None else _LAST]))
    return event


_LAST = "last"  # trained_to's key for the last training step seen, whatever its epoch


def kinds_of(events: list[tuple]) -> tuple[str, ...]:
    """The kinds of step line among the events ("megatron", "olmo", ...), in the order first seen."""
    return tuple(dict.fromkeys(e[1].kind for e in events if e[0] == "line"))


# Kinds whose step is not yet theirs here (an epoch, or 0 until the lines around them date them): alike values of two
# of them are no rank's copies
_DATED_LATER = ("generic_epoch", "held_out_print", "ptb_progress")


def _without_rank_copies(events: list[tuple]) -> list[tuple]:
    """Drop a step line that repeats one already seen at the same step (every rank printing it).

    Only copies within one stretch of the same step go; a resume that logs a step again later
    (after other steps) is kept, so the timeline still sees the attempt.
    """
    out, seen, current = [], set(), None
    for event in _epoch_line_copies_dropped(events):
        if event[0] == "line" and event[1].kind not in _DATED_LATER:
            record: StepLine = event[1]
            if record.step != current:
                current, seen = record.step, set()
            key = (record.kind, record.metrics)
            if key in seen:
                continue
            seen.add(key)
        out.append(event)
    return out


def _epoch_line_copies_dropped(events: list[tuple]) -> list[tuple]:
    """Epoch-only lines (kind "generic_epoch") less their rank copies: only where every such line comes k times in a
    row (k ranks printing each; the last may have fewer, the log cut before every rank printed it), one of each
    kept. Their step is the epoch, so a loop printing one a batch repeats a loss within an epoch (a bf16 loss takes
    few values) without any rank printing it twice."""
    at = [i for i, e in enumerate(events) if e[0] == "line" and e[1].kind == "generic_epoch"]
    runs, i = [], 0
    while i < len(at):
        j = i
        while j + 1 < len(at) and events[at[j + 1]][1] == events[at[i]][1]:
            j += 1
        runs.append(j - i + 1)
        i = j + 1
    whole = runs[:-1] if len(runs) > 1 and runs[-1] < runs[0] else runs  # the last line's copies may be cut off
    if not runs or min(whole) < 2 or len(set(whole)) > 1:
        return events
    copies, k = set(), runs[0]
    for n in range(0, len(at), k):
        copies.update(at[n + 1:n + k])
    return [e for i, e in enumerate(events) if i not in copies]


def step_line_warnings(events: list[tuple]) -> list[str]:
    cut = [e[1] for e in events if e[0] == "line" and e[1].cut]
    return [f"the last line (step {r.step}) is cut mid-write; its complete fields were kept" for r in cut]
