"""Lines a console prints once per launch of its script: where several launches were appended to one file (`nohup
python train.py >> train.log`, `tee -a`), where each began.

* DeepSpeed's launcher prints `[runner.py:N:main] cmd = ...` once as it starts the script's processes;
* the HF Trainer prints `***** Running training *****` once per train() call;
* a script's own start line, in words (`Starting training session`: `run_signs.says_training_started`), where the very
  same message (its logger's date and level left out) stands before the file's first record and again later: a
  launch's start-up line. A line a loop prints each epoch (`Start training epoch 3`) names its epoch, so it is not
  the same message twice.

A banner alone splits nothing: the readers that number a counter from each launch's start ask also that the rows after
it start over (a step counter back at its first value: `step_numbering`; a Trainer dict's epoch back at the log's start
and its learning rate fresh: `relaunched_dicts`). A resume prints its launch's banner too, but its steps, epoch and
schedule go on from the checkpoint's.

`banner_key(piece)`: the scanner's test of one line, a key for the banner it may be (else None);
`launch_event(key, at, last_record)`: the event of a banner at piece `at`, with the piece its launch's own text begins
at (`launch_texts`);
`launches_kept(events)`: the events less the ('launch', key) events of script lines that are no launch's start-up;
`launches_so_far(events)`: how many launch events stand before each event, to ask whether one lies between two;
`launched_attempts(frame, row_events, events)`: the attempts of a console's frame that begin after a launch banner
(the timeline orders them by the file's order, however few points they logged), each with the launch events before it;
`launch_texts(text, events, attempt_launches)`: the text of each launch, in file order, where the events hold more than
one that began a new attempt (or DeepSpeed's launcher started the script again).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..log_attempts import attempt_numbers
from ..discover.run_signs import says_training_started
from .console_lines.fields import LINE_BREAK
from .console_lines.stepless import logger_message

LAUNCH = "launch"  # the event's kind: (LAUNCH, key, piece, first piece of its launch's own text)
DEEPSPEED_CMD = "deepspeed_cmd"
TRAINER_HEADER = "trainer_header"
_FRAMEWORK_KEYS = (DEEPSPEED_CMD, TRAINER_HEADER)
_DEEPSPEED_CMD = re.compile(r"\[runner\.py:\d+:main\] cmd = ")
_TRAINER_HEADER = re.compile(r"^\s*\*{5} Running training \*{5}\s*$")
_LONGEST_BANNER = 120  # a start-up line is short; a long line that says training started is prose or a dump


def banner_key(piece: str) -> str | None:
    """The key of the launch banner `piece` may be (module docstring), else None."""
    if "cmd = " in piece and _DEEPSPEED_CMD.search(piece):
        return DEEPSPEED_CMD
    if "Running training" in piece and _TRAINER_HEADER.match(piece):
        return TRAINER_HEADER
    if len(piece) > 2 * _LONGEST_BANNER:
        return None
    lowered = piece.lower()  # the phrase test ignores case: `START TRAINING` is a start line too
    if not ("tart" in lowered or "egin" in lowered):
        return None
    message = logger_message(piece).strip()
    return message if len(message) <= _LONGEST_BANNER and says_training_started(message) else None


def launch_event(key: str, at: int, last_record: int) -> tuple:
    """The launch event of banner `key` at piece `at` (the text's lines and carriage-return pieces, as `scan` splits
    them), `last_record` the last piece that gave a record before it (-1: none). DeepSpeed's launcher prints its cmd =
    line as the launch begins: its text begins there. The Trainer prints its header inside train(), a script its start
    line once it has built its model: after the script printed its arguments, loaded its model and counted its
    parameters (DanielPuentee_gpt-from-zero's `Total parameters: 919,296` comes before `Starting training...`), so that
    launch's text begins after the last record of the launch before it."""
    return (LAUNCH, key, at, at if key == DEEPSPEED_CMD else last_record + 1)


def launches_kept(events: list[tuple]) -> list[tuple]:
    """The events, the launch events of a script's own line kept only where that line is a launch's start-up: printed
    before the file's first record (a step line or a dict) and again later."""
    first_record = next((i for i, e in enumerate(events) if e[0] in ("line", "dict")), len(events))
    seen: dict[str, list[int]] = {}
    for i, e in enumerate(events):
        if e[0] == LAUNCH:
            seen.setdefault(e[1], []).append(i)
    kept = {key for key, at in seen.items()
            if key in _FRAMEWORK_KEYS or (len(at) > 1 and at[0] < first_record)}
    if len(kept) == len(seen):
        return events
    return [e for e in events if e[0] != LAUNCH or e[1] in kept]


def launches_so_far(events: list[tuple]) -> list[int]:
    """For each event, how many launch events stand before it (and at it): a launch lies between events i < j where
    the counts differ."""
    counts, n = [], 0
    for e in events:
        n += e[0] == LAUNCH
        counts.append(n)
    return counts


def launched_attempts(frame: pd.DataFrame, row_events: np.ndarray, events: list[tuple]) -> dict[int, list[int]]:
    """The attempts (`log_attempts.attempt_numbers`: the steps go back) whose first row comes after a launch event that
    the row before it did not (`row_events`: the event index of each row), each with the indexes of the launch events
    between the two rows."""
    attempt = attempt_numbers(frame)
    out = {}
    for i in np.flatnonzero(np.diff(attempt) > 0) + 1:
        between = [j for j in range(int(row_events[i - 1]) + 1, int(row_events[i])) if events[j][0] == LAUNCH]
        if between:
            out[int(attempt[i])] = between
    return out


def launch_texts(text: str, events: list[tuple], attempt_launches: set[int]) -> list[str]:
    """The text of each launch the (kept) launch events of `text` begin, in file order: the first from the file's
    start, each next one from where its own text begins (`launch_event`); one text, the whole, where the events hold
    fewer than two launches. A Trainer header or a script's start line begins a launch only where it stands before a
    new attempt (`attempt_launches`: the indexes of the launch events between an attempt's first row and the row
    before it, `launched_attempts`): a loop that prints its start line each epoch, or one process whose train() runs
    twice (SFT then DPO) with its steps going on, is one run (`step_numbering`), its facts not one epoch's. DeepSpeed's
    cmd = line always does: its launcher started the script's processes again. A header or start line with no record
    since the launch event before it is that launch's own (DeepSpeed's cmd = line, then the header of the script it
    launched; each rank's copy of the header), or follows a launch that logged nothing: the two are read as one."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]  # where each piece begins
    cuts, floor = [], None
    for index, e in enumerate(events):
        if e[0] != LAUNCH:
            continue
        _, key, at, begins = e
        if floor is not None and (key == DEEPSPEED_CMD or begins > floor and index in attempt_launches):
            cuts.append(starts[min(begins, len(starts) - 1)])
        floor = at
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]
