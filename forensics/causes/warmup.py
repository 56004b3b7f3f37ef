"""The warm-up: the cause rule for a run with none (`no_warmup`), what says a run warmed up (`warm_up_seen`), and
what the log shows of the schedule around it (the run's planned length, whether the log shows its start, whether the
trouble came inside the window a warm-up covers).

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`.
"""
from __future__ import annotations

import numpy as np

from ..findings import Cause
from ..restarts import epoch_past_the_start
from ..analyzers.metrics import format_rate
from .evidence import Facts, evidence_value, lr_points, said
from .precursors import lr_precursor, rate_rose_without_end
from .setting_names import warm_up_advice


def no_warmup(facts: Facts) -> Cause | None:
    """The learning rate was at its peak from the first logged step (or the config sets no warm-up)."""
    if not facts.unstable_beyond_skips or facts.before_any_update or _warmup_configured(facts) \
            or (_after_the_warm_up_window(facts) and lr_precursor(facts) is None):
        return None
    lr = lr_points(facts.timeline)
    evidence = []
    if len(lr) >= 2 and _log_starts_at_the_start(facts, lr) and _first_point_inside_a_warm_up(facts, lr):
        first_step, first = int(lr.index[0]), float(lr.iloc[0])
        if first < facts.thresholds.warmup_peak_fraction * float(lr.max()) or _started_from_zero(facts, first_step):
            return None
        evidence.append(f"learning_rate was already {evidence_value(first)} at the first logged step {first_step} "
                        f"(peak {format_rate(lr.max())}): no warm-up")
    settings = [said(facts.config, k) for k in ("warmup_steps", "warmup_ratio") if facts.config.get(k) is not None]
    if not evidence and not settings:
        return None
    evidence += settings
    return Cause(
        cause="no_warmup", confidence="possible", evidence=evidence,
        suggestion=f"W{warm_up_advice(facts)[1:]}.",  # 'Warm up over the first 3-10% of steps (how).'
        title="No learning-rate warm-up",
    )


WARM_UP_WINDOW = 0.1  # the most of a run's steps a warm-up covers (recipes: the first 3-10%)
_SHORTEST_WARM_UP = 0.03  # ... and the least


def _first_point_inside_a_warm_up(facts: Facts, lr) -> bool:
    """Whether the first logged rate comes early enough to show a warm-up: within the shortest a recipe uses
    (`_SHORTEST_WARM_UP` of the planned steps) where the run's length is known, else at the first logging interval.
    A rate at its peak at step 400 of a 2,000-step run says nothing of a 60-step warm-up before it."""
    first_step = int(lr.index[0])
    total = planned_steps(facts) or _schedule_ran_out(facts)
    if total:
        return first_step <= max(1.0, _SHORTEST_WARM_UP * total)
    interval = float(np.median(np.diff(lr.index.to_numpy()))) if len(lr) >= 2 else 1.0
    return first_step <= max(interval, 1.0)


def _after_the_warm_up_window(facts: Facts) -> bool:
    """The trouble came, by a whole logging interval, after the longest warm-up a recipe uses had ended
    (`WARM_UP_WINDOW` of the run's planned steps): a warm-up would not have changed the rate in force there, nor,
    where nothing built up before it (no `lr_precursor`: the caller's part), anything that led to it. Only where the
    planned length is known (a log cut at the break does not say how long the run was to be)."""
    first = facts.first_unstable
    total = planned_steps(facts) or _schedule_ran_out(facts)
    if first is None or total is None:
        return False
    loss = facts.series("loss")
    steps = loss.index[loss.index <= first.step]
    interval = int(steps[-1] - steps[-2]) if len(steps) >= 2 else first.step
    return first.step - interval > WARM_UP_WINDOW * total


def planned_steps(facts: Facts) -> int | None:
    """How many optimizer steps the run was set up for: a configured max_steps (or the one a trainer_state.json
    records), or num_train_epochs at the steps an epoch took in the log; None where none says it."""
    c = facts.config
    recorded = [m.get("max_steps") for m in facts.timeline.meta.values()]
    for total in [c.get("max_steps")] + recorded:
        if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
            return int(total)
    epochs, epoch = c.get("num_train_epochs"), facts.series("epoch").dropna()
    if isinstance(epochs, (int, float)) and not isinstance(epochs, bool) and epochs > 0 and len(epoch) \
            and float(epoch.iloc[-1]) > 0 and int(epoch.index[-1]) > 0:
        return int(round(int(epoch.index[-1]) * float(epochs) / float(epoch.iloc[-1])))
    return None


_START_INTERVALS = 2  # a log's first point within this many of its own logging intervals of step 0 shows the start


def _log_starts_at_the_start(facts: Facts, lr) -> bool:
    """Whether the logged rate begins where the run did: a log whose first point comes hundreds of logging intervals
    past step 0 was resumed or cut (an Unsloth console captured from step 1503 of 4000, every 2 steps), and a warm-up
    before it would not show; so was an excerpt whose epoch column is already well past 0 where its steps say the
    run had just begun (console lines pasted from mid-run, their steps renumbered from 1), or whose lines the reader
    numbered with nothing in them to show the first at the start (`Facts.start_unshown`: shibing624's paste, the rate
    1.05e-7 at every line, would be told it had no warm-up)."""
    steps = lr.index.to_numpy()
    interval = float(np.median(np.diff(steps))) if len(steps) >= 2 else 1.0
    return steps[0] <= _START_INTERVALS * max(interval, 1.0) and not _epoch_past_the_start(facts, int(steps[0])) \
        and facts.start_unshown is None


def _epoch_past_the_start(facts: Facts, first_step: int) -> bool:
    """The logged epoch at `first_step` is well past what a log starting at step 0 would show there
    (`restarts.epoch_past_the_start`), going by the epochs per step its own later points advance: the steps were
    renumbered from a later start."""
    epoch = facts.series("epoch").dropna()
    epoch = epoch[epoch.index >= first_step]
    if len(epoch) < 2 or int(epoch.index[-1]) <= 0:
        return False
    per_step = float(epoch.iloc[-1]) / int(epoch.index[-1])
    expected = per_step * max(first_step, 1)
    return epoch_past_the_start(float(epoch.iloc[0]), expected)


_RAN_OUT = 0.05  # a logged rate down to this fraction of its peak at the last point: the schedule reached its end


def _schedule_ran_out(facts: Facts) -> int | None:
    """The run's length where no config says it: the last logged step, when the logged rate decayed there to
    `_RAN_OUT` of its peak (the schedule ran its course, so the log shows the whole run) and the log goes on past
    the trouble; None otherwise (a log cut at the break does not say how long the run was to be)."""
    lr, first = lr_points(facts.timeline), facts.first_unstable
    if len(lr) < 3 or first is None or int(lr.index[-1]) <= first.step:
        return None
    return int(lr.index[-1]) if float(lr.iloc[-1]) <= _RAN_OUT * float(lr.max()) else None


def warm_up_in_question(facts: Facts) -> bool:
    """Whether a warm-up could have changed the rate at the trouble, so asking for one fits: the log shows the run's
    first steps (a paste from mid-run or a resumed log cannot say whether the run warmed up) and the trouble came
    within or just after the longest warm-up recipes use."""
    if _after_the_warm_up_window(facts):
        return False
    lr = lr_points(facts.timeline)
    shown = lr if len(lr) >= 2 else facts.series("loss").dropna()
    return len(shown) == 0 or _log_starts_at_the_start(facts, shown)


def _started_from_zero(facts: Facts, first_positive: int) -> bool:
    """A learning rate logged as 0 before its first positive value (baby-llama2's `lr:0.0000000` at step 0, then
    1e-4 at step 1000): the schedule rose from 0 in steps the log does not show, a warm-up it cannot rule out."""
    raw = facts.timeline.series("learning_rate")
    return bool(((raw.index < first_positive) & (raw.to_numpy(dtype="float64") == 0.0)).any())


def _warmup_configured(facts: Facts) -> bool:
    return _warmup_key(facts) is not None


_WARMUP_KEYS = ("warmup_steps", "warmup_ratio", "ds.scheduler.params.warmup_num_steps")


def _warmup_key(facts: Facts) -> str | None:
    """The first config key that sets a warm-up (a positive number), or None."""
    return next((key for key in _WARMUP_KEYS if isinstance(v := facts.config.get(key), (int, float))
                 and not isinstance(v, bool) and v > 0), None)


def warm_up_seen(facts: Facts) -> str | None:
    """What says the run warmed its learning rate up, or None: a warm-up its config sets, or a logged rate that starts
    well below its peak before the trouble (`Thresholds.warmup_peak_fraction`) from a log that shows the start and
    stops rising (`rate_rose_without_end`)."""
    key = _warmup_key(facts)
    if key is not None:
        return said(facts.config, key)
    if rate_rose_without_end(facts) is not None:  # a rise with no end is no warm-up (ChristianPE1_transformer-test)
        return None
    whole = lr_points(facts.timeline)
    jumps = [f.step for f in facts.of_kind("lr_anomaly") if "factor" in f.evidence]
    if jumps:
        whole = whole[whole.index < min(jumps)]  # a rate that leapt above its schedule did not warm up to there
    first = facts.first_unstable
    lr = whole[whole.index <= first.step] if first is not None else whole
    still_warming = len(lr) == 1 and first is not None
    if still_warming:
        lr = _rise_through_the_break(whole)
    if len(lr) >= 2 and _log_starts_at_the_start(facts, lr) and \
            float(lr.iloc[0]) < facts.thresholds.warmup_peak_fraction * float(lr.max()):
        rise = (f"{format_rate(float(lr.iloc[0]))} at step {int(lr.index[0])} to "
                f"{format_rate(float(lr.max()))} at step {int(lr.idxmax())}")
        return (f"the logged rate was still warming up at the break: it rose from {rise}" if still_warming
                else f"the logged rate rose from {rise}")
    return None


def _rise_through_the_break(lr):
    """The logged rate from its first point up to where it stops rising, where the break came at that first point: one
    point cannot show a warm-up, the climb that goes on from it can (sugarandgugu's rate, 2.5e-4 at its break at step
    58, rose to 5e-4 at step 116 and held there, and it was told to warm up)."""
    rising = np.diff(lr.to_numpy()) > 0
    top = int(np.argmin(rising)) if not rising.all() else len(rising)
    return lr.iloc[:top + 1]
