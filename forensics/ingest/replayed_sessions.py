"""Sessions of a step-less history that a script appends one completed training call at a time, told by the loss.

A history with no step or epoch counter (a dict of parallel lists, a list of dicts without `step`) is numbered by
its place in the list. Where the script's own code appends each call's fresh history to the same file (nawaraken_
cevahir-ai's TrainingManager: a new history at each train(), `_save_training_history` extending the file's lists),
the entries are several sessions one after another, and the jump where a new one starts reads as a spike or a
divergence measured against an earlier session's floor. No counter goes back to say so; the loss does, where a later
session re-runs an earlier one: the same fresh start and the same descent, point for point (3.296, 2.273, 2.019,
1.845, 1.681 at entries 26-30; 3.302, 2.245, 2.003, 1.829, 1.668 at 36-40). A model that diverges does not retrace a
descent it made before within a few percent at every point; a training run launched again does.

Where the history does keep a counter of its own beside its lists (an `epochs` list: 1..10, then 1..5), the counter
says it plainly: `counter_restarts(counter)` gives where it goes back.

`replayed_session_starts(values)` gives the list positions where such sessions begin; `numbered_by_session(entries,
starts)` numbers each session's entries from 1 again, so that the timeline splits the file into attempts as it does
a log whose counter goes back (`log_attempts.attempt_numbers`: the last one stands, the earlier ones abandoned).
"""
from __future__ import annotations

import math

REPLAY_POINTS = 4  # a descent of this many points at the least, each lower than the one before ...
REPLAY_TOLERANCE = 0.03  # ... each within this share of the earlier descent's point at the same place (seeds differ)
_MIN_FALL = 1.2  # ... falling this many times over them or more: a flat stretch matches itself anywhere
_RELAUNCH_JUMP = 2.0  # a session after the first starts this many times above the entry before it or more


def replayed_session_starts(values: list[float]) -> list[int]:
    """The positions (after the first) where a session begins: a rise from the point before that starts a descent of
    `REPLAY_POINTS` or more points which retraces, within `REPLAY_TOLERANCE` at every point up to the next such rise
    or the end (at most as far as the earlier one ran), a descent that began earlier at the log's first point or at a
    rise of its own; that earlier start is a session's start too. A session after the first starts with a jump
    (`_relaunched`): a run launched again starts from a fresh model's loss, well above where the last one ended.

    Example: [3.3, 2.2, 2.0, 1.8, 0.5, 0.3, 3.3, 2.2, 2.0, 1.8] gives [6]."""
    candidates = [k for k in range(len(values) - REPLAY_POINTS + 1) if _rises_into_a_descent(values, k)]
    starts: set[int] = set()
    for n, j in enumerate(candidates):
        stretch_end = candidates[n + 1] if n + 1 < len(candidates) else len(values)
        earlier = next((i for i in candidates[:n] if i + REPLAY_POINTS <= j
                        and _retraces(values, i, j, min(j - i, stretch_end - j))), None)
        if j > 0 and earlier is not None and all(_relaunched(values, k) for k in (earlier, j) if k > 0):
            starts.update(k for k in (earlier, j) if k > 0)
    return sorted(starts)


def counter_restarts(counter: list) -> list[int]:
    """The positions where an epoch counter goes below its value before: a new session's first entry. The same value
    again is no restart: a history may log several entries an epoch (1, 1, 1, 2, 2, 2).

    Example: counter_restarts([1, 2, 3, 1, 2]) is [3]."""
    return [i for i in range(1, len(counter)) if _number(counter[i]) and _number(counter[i - 1])
            and counter[i] < counter[i - 1]]


def _number(value) -> bool:
    # finite too, unlike _config_keys.is_number: a NaN or Inf counter is no count to go back from
    return type(value) in (int, float) and math.isfinite(value)


def _rises_into_a_descent(values: list[float], at: int) -> bool:
    """Whether the value at `at` is up from the one before (or is the first) and the `REPLAY_POINTS` from it fall at
    every point, by `_MIN_FALL` x or more over them."""
    stretch = values[at:at + REPLAY_POINTS]
    if len(stretch) < REPLAY_POINTS or not all(_positive(v) for v in stretch):
        return False
    if at > 0 and not (_positive(values[at - 1]) and values[at] > values[at - 1]):
        return False
    return all(b < a for a, b in zip(stretch, stretch[1:])) and stretch[0] >= _MIN_FALL * stretch[-1]


def _relaunched(values: list[float], at: int) -> bool:
    """Whether the entry at `at` is `_RELAUNCH_JUMP` times the one before or more: a fresh model's loss after a trained
    one's (nawaraken's 0.037 -> 3.296, 1.104 -> 3.302). Batch-to-batch noise of a long per-batch history rises less
    than that between two entries, so its chance four-point matches are never taken for a relaunch."""
    return values[at] >= _RELAUNCH_JUMP * values[at - 1]


def _retraces(values: list[float], earlier: int, later: int, length: int) -> bool:
    """Whether the `length` points from `later` each lie within `REPLAY_TOLERANCE` of those from `earlier`. The whole
    stretch, to the next rise into a descent or the end (at most the earlier session's length), not its first
    `REPLAY_POINTS`: in a long noisy history some four falling points match an earlier four by chance, but what follows
    them does not; a re-run retraces its whole descent (the relearning that stops part way is no re-run)."""
    return all(_number(values[later + k]) and _number(values[earlier + k])
               and abs(values[later + k] - values[earlier + k]) <= REPLAY_TOLERANCE * values[earlier + k]
               for k in range(length))


def _positive(value) -> bool:
    return _number(value) and value > 0


def numbered_by_session(entries: list[dict], starts: list[int]) -> list[dict]:
    """The entries, each given a `step`: its place within its session, from 1 (sessions begin at `starts`)."""
    numbered, session_start, begins = [], 0, set(starts)
    for i, entry in enumerate(entries):
        if i in begins:
            session_start = i
        numbered.append({**entry, "step": i - session_start + 1})
    return numbered
