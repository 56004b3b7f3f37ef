"""Trainer dicts of several launches printed one after another into one console, none naming its step.

The HF Trainer's printed dicts carry an `epoch` but no step; where a script trains several models in one process or
one captured log (k-fold cross-validation, a sweep), each run's dicts begin again at the epoch where the first run's
began, and its learning-rate schedule starts over (nytseng_llm-reliability-llama2-lora: 15 folds, each from epoch 1.0
and learning rate 8e-05 after the previous fold's epoch 29-50 and 0.0023-0.004). Numbered by their order as one run,
each launch's fresh loss reads as a spike over the last one's memorized ~0.0001. Numbered from 1 again at each launch,
the steps go back there, and the timeline takes each later launch as a new attempt (the last one stands), as it does
for a CSV with appended launches (`csv_metrics`).

A launch starts at a step-less dict whose epoch went back to no further than where the log's first dict was (twice
it, plus the printed epoch's rounding: `restarts.epoch_past_the_start`), and whose learning rate, where it and the
previous dict print one, is back nearer the log's first than the previous one (`restarts.back_at_the_start`: a fresh
schedule). Not a launch: an epoch that goes back a little (a resume re-logging from its checkpoint's epoch); an epoch
counted per chunk over one schedule (Obychenkov_CSE234-hardneg: RapidFire prints each third of a 3-epoch run with
epochs 0.03-1.0 again while its learning rate carries on, 1.34e-4 then 1.32e-4).

`launch_starts(events)` gives the event indexes of the train dicts that begin a launch after the first;
`evaluations_by_launch(events, steps)` numbers an evaluation-only console's dicts within their launches (nothing
else dates them: one step 0 for all would merge the launches); `relaunch_note(events)` says what was done.
"""
from __future__ import annotations

import math

from ..restarts import back_at_the_start, epoch_past_the_start
from .dicts_and_bars import EXPLICIT_STEP_KEYS
from .launch_banners import launches_so_far


def launch_starts(events: list[tuple]) -> set[int]:
    """Indexes of the step-less dicts that begin a new launch (module docstring): train dicts (a `loss`), or in a
    console that prints none, eval dicts."""
    train = _train_dicts(events)
    return _starts(events, train or _eval_dicts(events))


def evaluations_by_launch(events: list[tuple], steps: dict[int, int]) -> tuple[dict[int, int], bool]:
    """`steps` with each step-less eval dict of a console that prints no train dict at its position (1, 2, ...) within
    its launch, where the console holds several launches; and whether any was moved (else `steps` as given)."""
    starts = launch_starts(events)
    if not starts or _train_dicts(events):
        return steps, False
    steps, position = dict(steps), 0
    for i in _eval_dicts(events):
        position = 1 if i in starts else position + 1
        steps[i] = position
    return steps, True


def relaunch_note(events: list[tuple]) -> tuple[str, ...]:
    """What the user is told where a console's dicts were split into launches, else ()."""
    starts = launch_starts(events)
    n = len(starts)
    if not n:
        return ()
    launches = launches_so_far(events)
    bannered = sum(1 for i in starts if launches[i] > launches[_previous_dict(events, i)])
    why = (f"{bannered} of them after the launcher's or the script's start line printed again (launches appended to "
           "one file)" if bannered else "cross-validation folds, a sweep")
    return (f"the printed dicts' epoch goes back to where the log began {n} times (with a fresh learning-rate "
            f"schedule where one is printed): {n + 1} launches one after another ({why}), "
            "each numbered from step 1 again; the last one is the run judged, the others earlier attempts",)


def _previous_dict(events: list[tuple], i: int) -> int:
    """The index of the last dict event before event `i` (0 where none)."""
    return next((j for j in range(i - 1, -1, -1) if events[j][0] == "dict"), 0)


def _starts(events: list[tuple], dicts: list[int]) -> set[int]:
    """Indexes among `dicts` (one kind, in file order) that begin a launch after the first."""
    if len(dicts) < 2:
        return set()
    first = events[dicts[0]][2]
    launches = launches_so_far(events)
    return {i for before, i in zip(dicts, dicts[1:])
            if _begins_again(events[i][2], events[before][2], first, launches[i] > launches[before])}


def _begins_again(pairs: dict, before: dict, first: dict, banner: bool) -> bool:
    """Whether a dict's epoch went back to the log's start and its learning rate (where printed) with it; after a
    launch banner (`banner`), an epoch as low as the last one's is back too (a first launch stopped within the epoch's
    first hundredth, every dict at the printed 0.0)."""
    epoch, last, start = (_finite(d, "epoch") for d in (pairs, before, first))
    if epoch is None or last is None or start is None or epoch_past_the_start(epoch, start):
        return False
    if epoch > last or (epoch == last and not banner):
        return False
    rates = [_finite(d, "learning_rate") for d in (pairs, before, first)]
    return None in rates or back_at_the_start(rates[0], rates[2], (rates[1],))


def _train_dicts(events: list[tuple]) -> list[int]:
    return [i for i, e in enumerate(events) if _stepless_dict(e) and "loss" in e[2]]


def _eval_dicts(events: list[tuple]) -> list[int]:
    return [i for i, e in enumerate(events) if _stepless_dict(e) and "eval_loss" in e[2] and "loss" not in e[2]]


def _stepless_dict(event: tuple) -> bool:
    return event[0] == "dict" and event[1] is None and not any(key in event[2] for key in EXPLICIT_STEP_KEYS)


def _finite(pairs: dict, key: str) -> float | None:
    value = pairs.get(key)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
