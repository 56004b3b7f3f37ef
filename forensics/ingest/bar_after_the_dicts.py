"""The training bar's one reading after a console's step-less dicts: a capture that kept only the output's tail.

Colab keeps a `!python train.py` cell's output as the screen showed it: each bar redraw that tqdm.write cleared to
print a dict is gone, and a notebook saved mid-run (or an output cut to its last lines) holds the last few dicts and,
after them, the bar where it stood (` 54% 2017/3753 [1:30:07<1:10:33,  2.44s/it]`). Numbered from the run's start,
those dicts would sit at its first steps; their own epochs say they are the steps just before that reading.

`tail_bar_total(events, loose)` tells that bar (the total of the training run, not an evaluation's);
`dated_back(events, loose, reading, per_epoch, every)` puts the dicts back from its reading.
"""
from __future__ import annotations

import math


def tail_bar_total(events: list[tuple], loose: list[int]) -> int | None:
    """The total of the first bar after the last train dict (`loose`: their event indices), where no bar comes
    before any of them, the bar is mid-run (a finished one is the closing summary rule's) and it fits the dicts as
    their training bar: its reading over the last dict's epoch (the steps an epoch makes, at most) spaces the dicts'
    epochs at least a step apart. An evaluation bar's reading (`5/11`) is far too small for that."""
    if not loose or any(e[0] == "bar" for e in events[:loose[-1]]):
        return None
    bar = next((e for e in events[loose[-1]:] if e[0] == "bar"), None)
    if bar is None or not 0 < bar[1] < bar[2]:
        return None
    epochs = _epochs(events, loose)
    if len(epochs) < 2 or epochs[-1] <= 0:
        return None
    spacing = (epochs[-1] - epochs[0]) / (len(epochs) - 1) * bar[1] / epochs[-1]
    return bar[2] if spacing >= 1 else None


def reading_after(events: list[tuple], loose: list[int], train_total: int | None) -> int | None:
    """The training bar's first reading after the last train dict, where no reading past 0 comes before it (a bar
    that dated them, or could have), else None."""
    if not loose or train_total is None:
        return None
    readings = [(i, e[1]) for i, e in enumerate(events) if e[0] == "bar" and e[2] == train_total]
    if any(n > 0 for i, n in readings if i < loose[-1]):
        return None
    return next((n for i, n in readings if i > loose[-1] and n > 0), None)


def steps_per_epoch_by_reading(events: list[tuple], loose: list[int], reading: int) -> float | None:
    """The steps an epoch makes as the reading after the last dict tells them: the reading over that dict's epoch
    (at most a logging interval more than the dict's step over it)."""
    epochs = _epochs(events, loose)
    return reading / epochs[-1] if epochs and epochs[-1] > 0 else None


def dated_back(events: list[tuple], steps: dict[int, int], loose: list[int], reading: int, per_epoch: float,
               every: int | None) -> tuple[dict[int, int], str] | None:
    """The dicts' steps put back from the bar's reading: the last at it (logged at most an interval before), each
    earlier one an interval before the next, the interval as the run states it (`every`), else the dicts' own epoch
    spacing x `per_epoch`; an eval dict at the train dict before it. None where they would go below step 1."""
    epochs = _epochs(events, loose)
    if every is None and len(epochs) == len(loose) > 1:
        every = max(1, round((epochs[-1] - epochs[0]) / (len(loose) - 1) * per_epoch))
    every = every or 1
    if reading - every * (len(loose) - 1) < 1:
        return None
    out = dict(steps)
    for k, i in enumerate(loose):
        out[i] = reading - every * (len(loose) - 1 - k)
    last = None
    for i, event in enumerate(events):
        if i in out and i not in loose and event[0] == "dict" and last is not None and steps[i] == steps[last]:
            out[i] = out[last]  # an eval dict at the train dict's step before it
        elif i in loose:
            last = i
    rule = (f"back from the training bar's reading after the last line ({reading}), by logging_steps ({every}): a "
            "capture of the output's tail, the dicts' own epochs past their positions")
    return out, f"{rule} ({len(loose)} lines)"


def _epochs(events: list[tuple], loose: list[int]) -> list[float]:
    """The loose dicts' own epochs, where every one has a finite one; else []."""
    epochs = [events[i][2].get("epoch") for i in loose]
    if all(isinstance(e, float) and math.isfinite(e) for e in epochs):
        return epochs
    return []
