"""A log that ends in the middle of its own learning-rate schedule: one `run_cut_short` warning at its last logged
step where a warm-up finished, then a decay began (linear or cosine: not slowing down) whose rate at the last logged
step is still within `_NEAR_THE_PEAK` of its peak - a schedule planned for many more steps than the log holds
(Mukilan1600_tamslate: warm-up to 6e-4 at step 999, 5.63e-4 at step 2520 of 20,000, the loss still falling;
LzZzZx328_finetune_LLM: 4.83e-5 of 5e-5 at step 2099 of 17,000). `detect_cut_short` is called with the run's planned
max_steps and whether its files say why the log ends (`end_accounted_for`), by `run_findings`.

Silent where the files say why the log ends (the Trainer's closing summary, a console's "training finished", a
trainer_state.json's `should_training_stop`, a last step at its planned max_steps), where the decay is under
`_LONG_DECAY` steps long, or where the schedule says no plan: a constant rate, an
exponential or inverse-square-root decay (fastest first, with no end to miss), a rate that rose again. A planned step
count alone is not enough: the corpus judges a log that stops at step S of a planned N healthy where it learned (a
mid-run checkpoint's trainer_state.json, AhmedNabil03_llama2-7b-finetune-dolly at 500 of 625; a console copied
part-way, KungYork_Megatron-LM at 5800 of 500,000) - 54 such cases. A cut run that learned is a warning, not
healthy, where its own schedule shows it stopped early: what it would have reached is unknown (VERDICTS.md).

A console that ends with its process's exit (`console_exit_line`: the resource tracker's shutdown warning) was written
to the end of the run, not copied part-way: where it stops under `_AT_THE_PLAN` of its planned max_steps, the same
schedule (warmed up, its decay begun and still within `_NEAR_THE_PEAK` of the peak) needs neither `_MIN_POINTS` nor
`_LONG_DECAY`, only `_FEW_AFTER_THE_PEAK` points from the peak on, each under the one before
(RoyK0108_amc-tutor-study: mlx_lm.lora's `Iter 320` of 600, 16 rate points, 1.996e-4 of its 2e-4 peak reached at 260,
then the warning). Only the console holding the run's last logged step tells its exit (an earlier try's console
that shut down says nothing of this one's end), and its own plan goes ahead of the config file's (mlx_lm's `Starting
training..., iters: 320`, a command line's override of the YAML's 600: that run ran its plan). A run that logs no
rate (OLMo's console, AntonioLopardo_OLMo: the same warning at step 2003 of 2500, judged healthy) shows no schedule to
miss.
"""
from __future__ import annotations

import math

import numpy as np

from ..findings import Finding
from ..timeline import Timeline
from .metrics import LR, Metrics, finite, format_rate

_AT_THE_PLAN = 0.9  # a last logged step at this share of the planned max_steps or more: the run ran its plan
_WARMED_UP = 0.5  # the first rate at most this share of the peak: a warm-up ran
_NEAR_THE_PEAK = 0.9  # a decaying rate still at this share of its peak or more: the decay has barely begun
_DECAYED = 0.99  # the last rate under this share of the peak: the decay began (not a constant rate)
_MIN_POINTS = 20  # learning-rate points a schedule is read from
_LONG_DECAY = 100  # steps from the peak to the log's end: a decay this long is a run, not a start stopped at once
_NOT_SLOWING = 0.8  # a decay whose later half falls at least this share of its earlier half: linear or cosine
_SQRT_MATCH = 0.02  # a last rate within this share of an inverse square root's from the peak: that schedule
_FEW_AFTER_THE_PEAK = 3  # rate points from the peak on: the decay seen falling twice, where the process's exit is shown
CLOSING_KEYS = ("train_runtime", "train_samples_per_second", "train_steps_per_second")  # train()'s closing summary


def end_accounted_for(timeline: Timeline, metrics: Metrics) -> bool:
    """Whether the run's files say why the log ends where it does: the Trainer's closing summary (train_runtime and
    kin) or a console's own 'training finished' line (the run finished), or a trainer_state.json's
    `should_training_stop` - True in the state saved at the end, False in a checkpoint saved mid-run, a snapshot of a
    run that went on (the corpus judges such a save healthy where it learned: ijinyu1113_Learned-Remasking-Policy-for-
    dLLM's checkpoint-2000 of 14,973, its cosine rate near its peak)."""
    if any(key in metrics for key in CLOSING_KEYS):
        return True
    return any(isinstance(meta.get("should_training_stop"), bool)
               or "training_finished" in (meta.get("console_run_signs") or ()) for meta in timeline.meta.values())


def exit_recorded(timeline: Timeline, metrics: Metrics) -> str | None:
    """The line with which a console holding the run's last logged step records its process's exit
    (`console_exit_line`), or None: another console's exit (an earlier try's, an eval's) says nothing of this end."""
    return next((meta["console_exit_line"] for meta in _metas_at_the_last_step(timeline, metrics)
                 if meta.get("console_exit_line")), None)


def console_plan(timeline: Timeline, metrics: Metrics, planned):
    """The steps the console holding the run's last logged step says it plans (`console_planned_steps`: mlx_lm's
    `Starting training..., iters: N`, a CLI override of the config file's iters), else `planned`."""
    return next((meta["console_planned_steps"] for meta in _metas_at_the_last_step(timeline, metrics)
                 if meta.get("console_planned_steps")), planned)


def _metas_at_the_last_step(timeline: Timeline, metrics: Metrics) -> list[dict]:
    last = _last_logged_step(metrics)
    frame = timeline.frame
    sources = set(frame.loc[frame["step"] == last, "source"]) if last is not None and len(frame) else set()
    return [meta for source, meta in timeline.meta.items() if source in sources]


def detect_cut_short(metrics: Metrics, max_steps, accounted_for: bool, exit_line: str | None = None) -> list[Finding]:
    """One `run_cut_short` warning at the last logged step where the learning rate's schedule had barely begun its
    decay there (`_schedule_barely_begun`) and the files do not say why the log ends (`end_accounted_for`), nor that
    it reached its planned `max_steps` (a schedule set longer than the run, the owner's choice); where the console
    ends with its process's `exit_line` short of a planned `max_steps`, a short schedule counts too (module
    docstring); else []."""
    last = _last_logged_step(metrics)
    if accounted_for or last is None or _ran_its_planned_steps(max_steps, last):
        return []
    exited_short = exit_line is not None and _planned(max_steps)
    schedule = _schedule_barely_begun(metrics, short=exited_short)
    if schedule is None:
        return []
    peak_step, peak, end = schedule
    ended = (f"the process exited after step {last} of its planned {int(max_steps)} ('{exit_line}' ends its "
             "console)" if exited_short else f"the log ends at step {last}")
    share = f"{100 * end / peak:.1f}" if end >= 0.995 * peak else f"{100 * end / peak:.0f}"  # never a rounded 100%
    how = "stopped or crashed" if exited_short else "stopped, crashed or its log was cut"
    rest = "" if exited_short else ", or find the rest of its log"
    message = (f"{ended} with the learning rate still {format_rate(end)}, {share}% of its peak "
               f"{format_rate(peak)} (step {peak_step}, after the warm-up): its decay had barely begun, so the run "
               f"was planned for many more steps and {how}. What it reached after is unknown; resume from its last "
               f"checkpoint{rest}.")
    evidence = {"last_step": last, "peak_step": peak_step, "peak_lr": peak, "last_lr": end}
    if exited_short:
        evidence.update({"planned_steps": int(max_steps), "exit_line": exit_line})
    return [Finding("run_cut_short", "warning", last, message, metric=LR, evidence=evidence)]


def _last_logged_step(metrics: Metrics) -> int | None:
    steps = [int(series.index[-1]) for series in metrics.values() if len(series)]
    return max(steps) if steps else None


def _planned(max_steps) -> bool:
    """Whether `max_steps` is a planned step count (a finite number above 0)."""
    return not isinstance(max_steps, bool) and isinstance(max_steps, (int, float)) and bool(np.isfinite(max_steps)) \
        and max_steps > 0


def _ran_its_planned_steps(max_steps, last: int) -> bool:
    """Whether a planned step count is known and the log reached `_AT_THE_PLAN` of it."""
    return _planned(max_steps) and max_steps <= last / _AT_THE_PLAN


def _schedule_barely_begun(metrics: Metrics, short: bool = False) -> tuple[int, float, float] | None:
    """(peak step, peak rate, last rate) of a learning rate that warmed up, then fell without rising again, slowly at
    first (linear or cosine, not slowing down), and is still within `_NEAR_THE_PEAK` of its peak at the end; else
    None. `short`: the process's exit is shown short of its plan, and a short schedule counts (module docstring)."""
    lr = finite(metrics[LR]) if LR in metrics else None
    if lr is None or len(lr) < (_FEW_AFTER_THE_PEAK + 1 if short else _MIN_POINTS):
        return None
    values = lr.to_numpy(dtype="float64")
    peak = float(values.max())
    top = int(np.flatnonzero(values == peak)[-1])  # the peak's last point: a plateau at the top ends there
    after, end = values[top:], float(values[-1])
    if peak <= 0 or values[0] > _WARMED_UP * peak or len(after) < (_FEW_AFTER_THE_PEAK if short else _MIN_POINTS // 2):
        return None
    # a run stopped within tens of steps of its peak is judged on what it did (Candice1995_LLM-QO-VLDB2025: stopped
    # at step 42 of 600, its loss 1.08 -> 0.03, healthy), unless its console shows the process exited there
    if not short and int(lr.index[-1]) - int(lr.index[top]) < _LONG_DECAY:
        return None
    # the decay began: the last rate under `_DECAYED` of the peak, or, over a short schedule, one that fell at every
    # point after the peak (mlx_lm prints 2.000e-04, 1.999e-04, 1.998e-04, 1.996e-04: a cosine's first 60 of 540 steps)
    began = bool(np.all(np.diff(after) < 0)) if short else end < _DECAYED * peak
    if not (began and _NEAR_THE_PEAK * peak <= end) or np.any(np.diff(after) > 0):
        return None
    half = len(after) // 2
    earlier, later = after[0] - after[half], after[half] - after[-1]
    peak_step = int(lr.index[top])
    # an inverse square root or exponential decay falls fastest first and has no planned end to miss
    if later < _NOT_SLOWING * earlier or _inverse_square_root(peak_step, int(lr.index[-1]), end / peak):
        return None
    return peak_step, peak, end


def _inverse_square_root(peak_step: int, last: int, share: float) -> bool:
    """Whether the last rate is the peak's x sqrt(peak step / last step) within `_SQRT_MATCH`: fairseq's inverse_sqrt,
    the Noam and T5 schedules, which decay for ever (over a short stretch they look straight)."""
    return peak_step > 0 and abs(share / math.sqrt(peak_step / last) - 1) <= _SQRT_MATCH
