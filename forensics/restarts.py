"""What a log's count says about where the run began: a counter that went back, a log that starts late.

Rules the readers and the cause rules share, on plain numbers (no file is read here, nothing is judged):

* `back_at_the_start`: a step counter went back to its first value; the training run again from scratch (a fresh
  model: the value is back where the log began) or the next epoch of a per-epoch counter (the value carries on from
  where the run had got to). TensorBoard tags (`ingest.event_step_axes`) and a hand-written loop's console lines
  (`ingest.step_numbering`) ask it.
* `epoch_past_the_start`: a log's first epoch is well past what its first point would show had the log begun where
  the run did: resumed from a checkpoint, or an excerpt from mid-run. The console reader (`ingest.stdout`, before it
  dates the printed dicts) and the learning-rate rules (`causes.warmup`, before they ask about a warm-up) ask it.
"""
from __future__ import annotations

from collections.abc import Iterable

# A re-run's first value sits this many times nearer where the log began than to where the run had got to.
RERUN_MARGIN = 2


def back_at_the_start(start: float, first: float, got_to: Iterable[float]) -> bool:
    """Whether `start` (the value just after the counter went back) is RERUN_MARGIN times nearer `first` (where the
    log began) than each of `got_to` (where the run had got to before the restart): a fresh model's level, so the
    training was run again from scratch, not a per-epoch counter's next epoch.

    The values are compared as given: pass logarithms to compare a loss as a scale (ratios).

    Example: back_at_the_start(2.9, first=3.0, got_to=[1.2]) is True; back_at_the_start(1.1, 3.0, [1.2]) is False.
    """
    return all(abs(start - first) * RERUN_MARGIN < abs(start - reached) for reached in got_to)


# The Trainer's printed epoch is rounded to two decimals.
EPOCH_ROUNDING = 0.01


def epoch_past_the_start(first_epoch: float, at_the_start: float) -> bool:
    """Whether a log's first epoch is more than twice `at_the_start` (the epoch its first point would show had the
    log begun where the run did, by the log's own pace of epochs), plus the printed epoch's rounding: the run was
    resumed (epoch 1.01, 1.02, ... after one epoch), or the log was cut from mid-run.

    Example: epoch_past_the_start(1.01, at_the_start=0.01) is True; epoch_past_the_start(0.02, 0.01) is False.
    """
    return first_epoch > 2 * at_the_start + EPOCH_ROUNDING
