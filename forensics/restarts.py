"""What a log's count says about where the run began: a counter that went back, a log that starts late.

Rules the readers and the cause rules share, on plain numbers (no file is read here, nothing is judged):

* `back_at_the_start`: a step counter went back to its first value; the training run again from scratch (a fresh
  model: the value is back where the log began) or the next epoch of a per-epoch counter (the value carries on from
  where the run had got to). TensorBoard tags (`ingest.event_step_axes`) and a hand-written loop's console lines
  (`ingest.step_numbering`) ask it.
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
