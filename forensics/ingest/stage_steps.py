"""The stages of one plan that a JSON-lines log names in every record, their step counts put end to end.

A script that trains in stages (AS119: RuthlessMercy307_AION-C's train_h200.py runs phase 0, then phase 1 on the same
model, and appends each phase's records with `"phase": "phase0"` / `"phase1"`) may restart its step counter at each
stage. Counted as written, the restart reads as a relaunch: the timeline keeps the last count as the run and files
what came before as an attempt thrown away. The log itself tells the two apart: where every record names its stage (a
text `phase` / `stage` field), each stage is one unbroken run of records, and the counter goes back only where the
stage changes, the later stages are the plan's next steps - their steps are put after the stage before's last. A
stage that appears again after another (the whole plan launched again) or a counter that goes back inside a stage (a
stage relaunched) leaves the records as written: those are attempts.
"""
from __future__ import annotations

from ..metric_names import JSON_LINE_STEP_KEYS

_STAGE_KEYS = ("phase", "stage")


def stages_end_to_end(entries: list[dict]) -> tuple[list[dict], str | None]:
    """(the entries, later stages' steps after the stage before's last; a note saying so) where the log's stages are
    one plan's (module docstring); (the entries as they are, None) otherwise."""
    key = next((k for k in _STAGE_KEYS if entries and all(isinstance(e.get(k), str) for e in entries)), None)
    steps = [_step(e) for e in entries]
    if key is None or None in steps:
        return entries, None
    stages = [e[key] for e in entries]
    changes = [i for i in range(1, len(entries)) if stages[i] != stages[i - 1]]
    # a train record and an eval record at one step are no going back; the same step where the stage changes is
    backs = [i for i in range(1, len(entries))
             if steps[i] < steps[i - 1] or (steps[i] == steps[i - 1] and i in changes)]
    if not backs or not set(backs) <= set(changes) or len(set(stages)) != len(changes) + 1:
        return entries, None
    offsets, shift, reached = [], 0, steps[0]
    for i, step in enumerate(steps):
        if i in backs:
            shift = reached + (steps[i] <= 0)  # a stage counted from 0 starts after the last step, not on it
        offsets.append(shift)
        reached = max(reached, step + shift)
    moved = [{**e, _step_key(e): s + off} if off else e for e, s, off in zip(entries, steps, offsets)]
    order = ", ".join(dict.fromkeys(stages))
    return moved, (f"the records name their {key} ({order}), each one unbroken run, and the step counter restarts only "
                   f"where the {key} changes: stages of one plan, counted end to end (a later {key}'s steps after the "
                   f"one before's last), not a relaunch")


def _step_key(entry: dict) -> str | None:
    return next((k for k in JSON_LINE_STEP_KEYS if k in entry), None)


def _step(entry: dict) -> int | None:
    """A record's step as a whole number, None where it names none (a `"N/M"` string, a record without one)."""
    value = entry.get(_step_key(entry)) if _step_key(entry) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
