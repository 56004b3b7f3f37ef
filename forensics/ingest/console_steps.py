"""The steps of a console's Trainer dicts, which print none.

`dict_steps(events, ...)` dates each printed dict: the step it names, else the training progress bar before it, else
back from its one reading after them (`bar_after_the_dicts`), else its position x the logging interval (estimated from
the run's total steps, or as the run states it: `stated_logging`), else its own epoch x the steps an epoch makes.
`training_bar_total(events)` tells the training bar among the others (evaluation, tokenizing). The loss scaler's
overflow lines are dated in `overflow_steps`.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ..restarts import epoch_past_the_start
from .bar_after_the_dicts import dated_back, reading_after, steps_per_epoch_by_reading, tail_bar_total
from .closing_summary import dated_by_finished_bar, dated_by_train_output
from .dicts_and_bars import EXPLICIT_STEP_KEYS
from .evaluations_only import RULE as EVALS_BY_EPOCH, dated_by_their_epochs
from .relaunched_dicts import evaluations_by_launch, launch_starts
from .stated_logging import StatedLogging


def training_bar_total(events: list[tuple]) -> int | None:
    """The total of the training progress bar: the one most often seen right before a loss dict, of those whose
    readings never go back where there are such (`restarting_totals`); where no bar comes before one (a paste of the
    log's tail, its finished bar last), the total of a finished bar after the closing summary dict (`train_runtime`)."""
    last_bar, seen = None, Counter()
    for event in events:
        if event[0] == "bar":
            last_bar = event[2]
        elif event[0] == "dict" and "loss" in event[2] and last_bar is not None:
            seen[last_bar] += 1
    restarting = restarting_totals(events) | _evaluation_totals(events)
    if any(total not in restarting for total in seen):
        seen = Counter({total: n for total, n in seen.items() if total not in restarting})
    if seen:
        return seen.most_common(1)[0][0]
    summary = next((i for i, e in enumerate(events) if e[0] == "dict" and "train_runtime" in e[2]), None)
    finished = [e[2] for e in events[summary:] if e[0] == "bar" and e[1] == e[2]] if summary is not None else []
    return finished[-1] if finished else tail_bar_total(events, _loose_train_dicts(events))


def _loose_train_dicts(events: list[tuple]) -> list[int]:
    """Indices of the train dicts, where none names its step (a prefix or a key); else []."""
    train = [i for i, e in enumerate(events) if e[0] == "dict" and "loss" in e[2]]
    if any(events[i][1] is not None or explicit_step(events[i][2]) is not None for i in train):
        return []
    return train


def restarting_totals(events: list[tuple]) -> set[int]:
    """The totals of bars whose readings go back (`50/50` then `0/50`): a loop drawn anew each time, as an evaluation
    bar is; the training bar counts on. Where a notebook keeps only the bars that a newline ended (Colab deletes each
    redraw that tqdm.write cleared for a dict), the finished evaluation bar is often the last one before a dict."""
    last: dict[int, int] = {}
    restarting = set()
    for event in events:
        if event[0] == "bar":
            if event[1] < last.get(event[2], 0):
                restarting.add(event[2])
            last[event[2]] = event[1]
    return restarting


def _evaluation_totals(events: list[tuple]) -> set[int]:
    """The totals of bars drawn `_EVAL_DRAWS` times or more, each draw followed by an eval dict before any other dict:
    the bar of each evaluation, whatever its readings. A notebook's ipywidgets bar keeps only its first frame as text
    (`0/32`), so the eval bar's readings never go back (`restarting_totals` cannot tell it), and where the eval dict
    and the next train dict come out in one stream write it stands right before that train dict too (Ka0Ri_RAG: ten
    evaluations of 32 batches between ten train dicts, the training bar's one frame `0/100` before the first)."""
    draws: Counter = Counter()
    evaluated: Counter = Counter()
    pending: list[int] = []
    for event in events:
        if event[0] == "bar":
            pending.append(event[2])
        elif event[0] == "dict":
            if "loss" not in event[2] and any(str(key).startswith("eval_") for key in event[2]):
                evaluated.update(set(pending))
            draws.update(set(pending))
            pending = []
    return {total for total, n in draws.items() if n >= _EVAL_DRAWS and evaluated[total] == n}


_EVAL_DRAWS = 2


def dict_steps(events: list[tuple], train_total: int | None, per_epoch: float | None = None,
                stated: StatedLogging | None = None) -> tuple[dict[int, int], str]:
    """Step of every dict event (by index): explicit, else the training bar, else the position.

    When the bars disagree with the dicts' own epochs, stdout was block-buffered (nohup, a pipe)
    while tqdm wrote to unbuffered stderr: the dicts come out in bursts, after bars that ran
    ahead. Their order is still right, so the bars are not used for them then.

    The position rule counts the train dicts from the run's first step. A resumed run (its bar jumps from 0 to the
    checkpoint's step) logs only from there, so where the position rule dated the dicts (no bar did) and their own
    epochs x the steps an epoch makes (the banner's,
    else the finished bar's total over the closing summary's epoch) put them more than `_POSITION_SLACK` logging
    intervals (or a hundredth of an epoch, the rounding of a printed epoch) away from their positions, the epochs
    date them. `stated`: the logging interval the run states (`stated_logging`), for the position rule. A closing
    summary is then put at its TrainOutput's global step (`closing_summary`), and where no train dict was logged the
    eval dicts at their epochs by it (`evaluations_only`). Where the dicts' epoch and learning rate go back to where
    the log began (launches one after another: `relaunched_dicts`) the position rule counts from each launch's start.
    """
    steps, how = _dated_by_rules(events, train_total, per_epoch, stated)
    steps = dated_by_finished_bar(events, dated_by_train_output(events, steps), train_total)
    steps, by_epochs = dated_by_their_epochs(events, steps)
    how = (f"{how}; {EVALS_BY_EPOCH}" if how else EVALS_BY_EPOCH) if by_epochs else how
    steps, by_launch = evaluations_by_launch(events, steps)
    return steps, (f"{how}; {_EVALS_BY_LAUNCH}" if how else _EVALS_BY_LAUNCH) if by_launch else how


_EVALS_BY_LAUNCH = "eval dicts numbered by their order within each launch (no train dict logged)"


def _dated_by_rules(events: list[tuple], train_total: int | None, per_epoch: float | None,
                    stated: StatedLogging | None) -> tuple[dict[int, int], str]:
    """`dict_steps` before the closing summaries are dated by their TrainOutput."""
    steps, how = _steps_by_rules(events, train_total, use_bars=True, per_epoch=per_epoch, stated=stated)
    if _bars_run_ahead(events, steps):
        steps, how = _steps_by_rules(events, train_total, use_bars=False, per_epoch=per_epoch, stated=stated)
        how += "; the progress bars ran ahead of the buffered dict lines (their epochs say so), so not used"
        if per_epoch and _bars_run_ahead(events, steps):
            # the banner's steps per epoch are not the dicts' (max_steps stopped inside one epoch: `Num Epochs = 1 |
            # Total steps = 30` over 6470 steps' worth of data): their epochs would put them all on one step
            steps, how = _steps_by_rules(events, train_total, use_bars=False, stated=stated)
            how += "; the banner's steps per epoch do not fit the dicts' epochs, so not used"
    if "position x logging_steps" in how and "progress bar before" not in how:  # (bar-dated dicts are right)
        back = _back_from_a_later_bar(events, steps, train_total, per_epoch, stated)
        if back is not None:
            return back
        per = per_epoch or _bar_steps_per_epoch(events, train_total)
        every, _ = _logging_interval(events, train_total, stated)
        if per and _positions_off_their_epochs(events, steps, per, every):
            by_epoch, rules = _steps_by_rules(events, train_total, use_bars=False, per_epoch=per, by_epoch=True)
            if not _bars_run_ahead(events, by_epoch):
                steps, how = by_epoch, rules + ("; the positions x logging_steps did not fit the dicts' own epochs "
                                                "(a resumed run logs from its checkpoint's step)")
    return steps, how


_POSITION_SLACK = 2  # logging intervals a dict's position-rule step may be off its epoch's step


def _back_from_a_later_bar(events: list[tuple], steps: dict[int, int], train_total: int | None,
                           per_epoch: float | None, stated: StatedLogging | None) -> tuple[dict[int, int], str] | None:
    """The dicts dated back from the training bar's one reading after them (`bar_after_the_dicts`), where their
    positions x the logging interval do not fit their own epochs x the steps an epoch makes (the banner's, else the
    reading over the last dict's epoch); else None."""
    loose = _loose_train_dicts(events)
    reading = reading_after(events, loose, train_total)
    per = per_epoch or (steps_per_epoch_by_reading(events, loose, reading) if reading else None)
    if not reading or not per:
        return None
    every, said = _logging_interval(events, train_total, stated)
    if not _positions_off_their_epochs(events, steps, per, every):
        return None
    return dated_back(events, steps, loose, reading, per, said.every if said else None)


def _bar_steps_per_epoch(events: list[tuple], train_total: int | None) -> float | None:
    """Steps an epoch makes from a finished training bar: its total over the closing summary dict's epoch."""
    summary = next((e[2] for e in events if e[0] == "dict" and "train_runtime" in e[2]), {})
    epoch = summary.get("epoch")
    if not train_total or not epoch or not math.isfinite(epoch) or epoch <= 0 or (
            _steps_reached(events, train_total) != train_total):
        return None
    return train_total / epoch


def _positions_off_their_epochs(events: list[tuple], steps: dict[int, int], per_epoch: float, every: int) -> bool:
    """Whether the train dicts' steps (by position) sit, in the median, further from their own epochs x per_epoch
    than `_POSITION_SLACK` logging intervals and a hundredth of an epoch."""
    off = [abs(steps[i] - e[2]["epoch"] * per_epoch) for i, e in enumerate(events)
           if e[0] == "dict" and "loss" in e[2] and "epoch" in e[2] and e[1] is None and explicit_step(e[2]) is None]
    return bool(off) and float(np.median(off)) > max(_POSITION_SLACK * every, 0.01 * per_epoch)


def _bars_run_ahead(events: list[tuple], steps: dict[int, int]) -> bool:
    """Whether two train dicts without a step of their own got steps that their epochs contradict:
    the same step for different epochs, or a later epoch at a lower step."""
    seen: list[tuple[int, float]] = []
    for i, event in enumerate(events):
        pairs = event[2] if event[0] == "dict" else {}
        if "loss" in pairs and "epoch" in pairs and event[1] is None and explicit_step(pairs) is None:
            seen.append((steps[i], pairs["epoch"]))
    return any((s2 == s1 and e2 != e1) or (s2 < s1 and e2 > e1) for (s1, e1), (s2, e2) in zip(seen, seen[1:]))


def _steps_by_rules(events: list[tuple], train_total: int | None, use_bars: bool, per_epoch: float | None = None,
                    by_epoch: bool = False, stated: StatedLogging | None = None) -> tuple[dict[int, int], str]:
    """Each dict's step (`dict_steps`); `by_epoch`: a train dict with an epoch is dated by it whatever the logging
    interval."""
    steps: dict[int, int] = {}
    rules: Counter = Counter()
    bar_n = None
    bar_used = False  # the last bar has dated a train dict already
    n_train, last, last_train = 0, 0, 0
    dated_by: list[tuple[int, str]] = []  # (event index, the rule that dated it) of each train dict
    every, said = _logging_interval(events, train_total, stated)
    first_at_one = said is not None and said.first_step  # logging_first_step: a dict at step 1, then every N
    # a capture that kept a single reading of the training bar, mid-run (a paste whose other bar lines were dropped):
    # the train dicts after the first it dates go on from it; where bars recur, dicts between two readings share a bar
    # (buffered stdout, a bar drawn every few logs) and other rules place them
    readings = [e[1] for e in events if e[0] == "bar" and e[2] == train_total]
    epochs = {e[2].get("epoch") for e in events if e[0] == "dict" and "loss" in e[2]}
    one_bar = len(readings) == 1 and train_total is not None and readings[0] < train_total \
        and len(epochs) <= 1  # not a finished bar, and no epochs that tell the dicts apart (the epoch rule reads them)
    relaunched = launch_starts(events)  # (each launch's dicts are numbered from its own start)
    for i, event in enumerate(events):
        if event[0] == "bar" and event[2] == train_total and use_bars:
            bar_n, bar_used = event[1], False
        if event[0] == "line":  # an eval dict after a loop's step lines belongs to the last of them
            last = max(last, event[1].step)
        if event[0] != "dict":
            continue
        pairs = event[2]
        is_train = "loss" in pairs
        n_train = 1 if i in relaunched and is_train else n_train + is_train
        step = event[1] if event[1] is not None else explicit_step(pairs)
        if step is None and bar_n == 0 and is_train and not bar_used and _past_the_start(pairs):
            bar_n = None  # the bar's first draw, kept because a warning's newline ended it: a stale reading
        if step is None and bar_n is not None and bar_used and is_train and one_bar:
            step, rule = last_train + every, f"{_AFTER_THE_BAR}, by logging_steps ({every})"
        elif step is None and bar_n is not None:
            step, rule = bar_n, _BY_BAR
        elif step is None and (every == 1 or by_epoch) and per_epoch and is_train and "epoch" in pairs:
            # no bar and no clean logging interval: the dict's own epoch x the banner's steps per epoch
            step, rule = max(1, round(pairs["epoch"] * per_epoch)), f"epoch x {per_epoch:g} steps per epoch"
        elif step is None:
            step = (1 if n_train == 1 else (n_train - 1) * every) if first_at_one and is_train else (
                n_train * every if is_train else last)
            rule = f"position x logging_steps ({every}{AS_STATED} in {said.source})" if said else (
                f"position x logging_steps ({every})")
        else:
            rule = ""
        if rule:
            rules[rule] += 1
        if is_train:
            dated_by.append((i, rule))
            bar_used, last_train = bar_n is not None, step
        steps[i] = last = step
    if _before_the_first_bar(steps, dated_by):
        rules["back from the first bar-dated line"] += 1
    if use_bars and _ahead_of_their_bar(events, steps, dated_by, train_total):
        rules["a line printed just before its bar's step"] += 1
    return steps, "; ".join(f"{rule} ({n} lines)" for rule, n in rules.items())


def _past_the_start(pairs: dict) -> bool:
    """Whether a dict's own epoch says it was logged after step 0 (no data has been seen at step 0: epoch 0.0). A bar's
    reading of 0 before the first train dict dates it and those after it only where this is not so: a run logging
    every step prints its first dict at epoch 0.0 before the bar's redraw (`_ahead_of_their_bar`)."""
    epoch = pairs.get("epoch")
    return isinstance(epoch, float) and math.isfinite(epoch) and epoch > 0


_BY_BAR = "the training progress bar before each line"
AS_STATED = ", as stated"
BY_ORDER = "position x logging_steps (1) "  # (the rule's text where nothing gave the interval)
_AFTER_THE_BAR = "on from the last bar-dated line"


def numbered_by_order(how) -> bool:
    """Whether a reader's `step_inferred` text (its parts joined by "; ") says every part of the log was numbered by
    its order alone (`BY_ORDER`): nothing dated the printed dicts."""
    return isinstance(how, str) and bool(how) and all(part.startswith(BY_ORDER) for part in how.split("; "))


def _before_the_first_bar(steps: dict[int, int], dated_by: list[tuple[int, str]]) -> bool:
    """Train dicts dated by their position ahead of the first one a progress bar dates (a paste or a capture that
    begins after its bar line) are put back from that one by the bar-dated lines' own spacing, not numbered from the
    start of the run (LLaVA issue 918: a first dict with no bar above it, then dicts at bars 2565-2569). Returns whether
    any moved."""
    barred = [i for i, rule in dated_by if rule == _BY_BAR or rule.startswith(_AFTER_THE_BAR)]
    if len(barred) < 2:
        return False
    leading = [i for i, rule in dated_by[:[i for i, _ in dated_by].index(barred[0])] if rule.startswith("position")]
    spacing = max(1, int(round(float(np.median(np.diff([steps[i] for i in barred]))))))
    first = steps[barred[0]]
    if not leading or first - spacing * len(leading) < 0:
        return False
    for k, i in enumerate(leading):
        steps[i] = first - spacing * (len(leading) - k)
    return True


def _ahead_of_their_bar(events: list[tuple], steps: dict[int, int], dated_by: list[tuple[int, str]],
                        train_total: int | None) -> bool:
    """A train dict that the bar before it dates at the previous train dict's step, where the training bar goes on to
    that step + 1 before the next dict and the next dict sits higher still: tqdm's stderr and the Trainer's stdout
    came out of order (the dict before its bar's redraw), so it is that step + 1. Returns whether any moved."""
    moved = False
    for k in range(1, len(dated_by)):
        i, rule = dated_by[k]
        if rule != _BY_BAR or steps[i] != steps[dated_by[k - 1][0]]:
            continue
        until = dated_by[k + 1][0] if k + 1 < len(dated_by) else len(events)
        bars = [e[1] for e in events[i + 1:until] if e[0] == "bar" and e[2] == train_total]
        later = steps[dated_by[k + 1][0]] if k + 1 < len(dated_by) else None
        if steps[i] + 1 in bars and (later is None or later > steps[i] + 1):
            steps[i] += 1
            moved = True
    return moved


def explicit_step(pairs: dict) -> int | None:
    """The step a dict line names. `steps` (the HF course's Accelerate loop: completed steps) counts only in a dict
    with no `epoch`: a loop's `{'epoch': 1, 'steps': 50, ...}` counts within each epoch."""
    for key in EXPLICIT_STEP_KEYS:
        if key == "steps" and "epoch" in pairs:
            continue
        value = pairs.get(key)
        if value is not None:
            head = str(value).split("/")[0].strip()
            if head.isdigit() and len(head) <= 18:  # fits the int64 step column
                return int(head)
    return None


def _logging_interval(events: list[tuple], train_total: int | None,
                      stated: StatedLogging | None) -> tuple[int, StatedLogging | None]:
    """The logging interval (`_logging_steps_estimate`), else the one the run states, else 1; and the statement where
    it was used. A stated last step (W&B's summary) over the train dicts gives one as a closing summary's does.
    Neither is used where the dicts' epochs say the run resumed: counted from step 0 the positions would be off by
    the checkpoint's step, and the summary's step over the dicts logged since the resume is no interval."""
    every = _logging_steps_estimate(events, train_total)
    if every > 1 or stated is None or _resumed_by_epochs(events):
        return every, None
    if stated.every is not None:
        return stated.every, stated
    n_train = sum(1 for e in events if e[0] == "dict" and "loss" in e[2])
    every = _clean_interval(stated.last_step, n_train)
    return (every, stated) if every > 1 else (1, None)


def _resumed_by_epochs(events: list[tuple]) -> bool:
    """Whether the train dicts' epochs start well past 0 (`restarts.epoch_past_the_start`): the first dict of a log
    that began with the run sits one of their own spacings in."""
    epochs = [e[2]["epoch"] for e in events if e[0] == "dict" and "loss" in e[2]
              and isinstance(e[2].get("epoch"), (int, float)) and math.isfinite(e[2]["epoch"])]
    if len(epochs) < 2:
        return False
    spacing = (epochs[-1] - epochs[0]) / (len(epochs) - 1)
    return epoch_past_the_start(epochs[0], abs(spacing))


def _logging_steps_estimate(events: list[tuple], train_total: int | None) -> int:
    """logging_steps from the run's total steps / the number of train lines, when it is clean.

    The total comes from the training bar (as far as it got: a run stopped at 829/1954 logged 829
    steps' worth of lines) over all the train lines, else the first closing summary's train_runtime x
    train_steps_per_second (rounded by HF to 3 decimals, hence the tolerance) over the train lines before it: the
    steps of the training that printed it (Obychenkov_CSE234-hardneg: RapidFire trains 3 epochs as three chunks of
    176 steps, each closed by its own summary; 176 over the first chunk's 35 lines is logging_steps 5, over all 105
    lines no whole number).
    """
    reached = _steps_reached(events, train_total)
    if reached:
        return _clean_interval(reached, _train_lines_before(events, len(events)))
    at = next((i for i, e in enumerate(events) if e[0] == "dict" and "train_runtime" in e[2]), None)
    if at is None:
        return 1
    summary = events[at][2]
    total = summary.get("train_runtime", 0) * summary.get("train_steps_per_second", 0)
    return _clean_interval(total, _train_lines_before(events, at))


def _train_lines_before(events: list[tuple], end: int) -> int:
    """How many train dicts (a `loss`) come before event `end`."""
    return sum(1 for e in events[:end] if e[0] == "dict" and "loss" in e[2])


def _clean_interval(total: float | None, n_train: int) -> int:
    """total / n_train where it is a whole number of steps (within the rounding of HF's summary), else 1."""
    if not n_train or not total or not math.isfinite(total):
        return 1
    every = round(total / n_train)
    return every if every >= 1 and abs(total / n_train - every) < 0.05 * every + 0.05 else 1


def _steps_reached(events: list[tuple], train_total: int | None) -> int | None:
    """The training bar's furthest position: its total when the run finished, less where it stopped."""
    furthest = max((e[1] for e in events if e[0] == "bar" and e[2] == train_total), default=0) if train_total else 0
    return furthest or train_total
