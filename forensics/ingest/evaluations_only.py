"""The evaluation dicts of a run that logged no training dict: a run shorter than its logging interval.

The Trainer logs its training loss every `logging_steps` (500 by default) but evaluates on its own schedule (each
epoch with `eval_strategy="epoch"`): a run of fewer steps than its logging interval prints only its eval dicts and the
closing summary (ANURAGMN_benchmarkingRougeBLEU: t5-small, 248 steps over 4 epochs, four `{'eval_loss': ...,
'epoch': 1.0}` dicts, then `{'train_runtime': ...}` and `TrainOutput(global_step=248, ...)`). No train dict dates them
(the position rule puts an eval dict at the last train dict's step: 0 here, all four on one point), but each names its
epoch, and the closing summary, dated by its TrainOutput (`closing_summary`), says the steps the run's epochs made.

`dated_by_their_epochs(events, steps)` puts each such eval dict at its epoch x the summary's steps per epoch.
"""
from __future__ import annotations

import math

from .dicts_and_bars import EXPLICIT_STEP_KEYS

RULE = "eval dicts at their epoch x the closing summary's steps per epoch (no train dict logged)"


def dated_by_their_epochs(events: list[tuple], steps: dict[int, int]) -> tuple[dict[int, int], bool]:
    """`steps` (each dict event's, by index) with each undated eval dict put at round(its epoch x N / E), N and E the
    step and epoch of the dated closing summary after it, where the console logs no train dict at all; and whether
    any was moved."""
    if any(e[0] == "dict" and "loss" in e[2] for e in events):
        return steps, False
    moved = False
    for i, event in enumerate(events):
        epoch = _undated_eval_epoch(event)
        per_epoch = _summary_steps_per_epoch(events[i + 1:], steps, i + 1) if epoch is not None else None
        if per_epoch is not None:
            steps[i] = max(1, round(epoch * per_epoch))
            moved = True
    return steps, moved


def _undated_eval_epoch(event: tuple) -> float | None:
    """The epoch of an eval dict that names no step (prefix or key), else None."""
    pairs = event[2] if event[0] == "dict" else {}
    epoch = pairs.get("epoch")
    if "eval_loss" not in pairs or event[1] is not None or any(key in pairs for key in EXPLICIT_STEP_KEYS):
        return None
    return epoch if isinstance(epoch, float) and math.isfinite(epoch) and epoch > 0 else None


def _summary_steps_per_epoch(later: list[tuple], steps: dict[int, int], offset: int) -> float | None:
    """The steps an epoch made, as the first closing summary after an eval dict says: its step (as dated) over its
    epoch; None where it has no step past 0 or no epoch."""
    for k, event in enumerate(later):
        pairs = event[2] if event[0] == "dict" else {}
        if "train_runtime" not in pairs:
            continue
        step, epoch = steps.get(offset + k, 0), pairs.get("epoch")
        if step > 0 and isinstance(epoch, float) and math.isfinite(epoch) and epoch > 0:
            return step / epoch
        return None
    return None
