"""DeepSpeed fp16 overflow storms, from the `OVERFLOW! ... reducing to Y` lines of a captured log.

Metrics read (written by the stdout ingestor): `loss_scale` (the scale after each overflow),
`overflow` (one point per overflow step) and `loss_scale_at_minimum` (DeepSpeed's "Current
loss scale already at minimum ... Exiting run.").

A dynamic loss scaler overflows now and then by design: it starts at 2**16, halves on each
overflow and tries doubling again every `loss_scale_window` steps. A few isolated overflows
are the scaler doing its job, but each one is an update skipped, which the owner should know (VERDICTS.md: isolated
fp16 skipped steps are a warning): one `skipped_steps` warning. A storm -- `overflow_storm_count` overflows on
consecutive steps, or the scale falling to its floor -- means every step is being skipped: warning, and
an error when the scale hit the floor (DeepSpeed stops the run there). A scale that goes on to rise again after it
reached the floor shows the run went on (a scaler whose own minimum is lower, Megatron's `--min-loss-scale`): the storm
is then a warning. Overflows in a row at the log's first steps that end within a fifth of it are the scaler's
start-up search down from its initial scale (`_calibration`): skipped steps, not a storm.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding, plural
from .metrics import DEEPSPEED_SKIPPED, Metrics, format_number

SCALE, OVERFLOW, AT_MINIMUM = "loss_scale", "overflow", "loss_scale_at_minimum"


def overflow_steps(metrics: Metrics) -> list[int]:
    """Steps with an overflow: the `overflow` points, else the steps where the loss scale fell."""
    if OVERFLOW in metrics:
        ov = metrics[OVERFLOW]
        return [int(s) for s in ov.index[ov.to_numpy() > 0]]
    scale = metrics.get(SCALE)
    if scale is None:
        return []
    values = scale.to_numpy()
    return [int(s) for s, prev, cur in zip(scale.index[1:], values[:-1], values[1:]) if cur < prev]


def overflow_count(metrics: Metrics, steps: list[int]) -> int:
    """How many overflows: the `overflow` points' values (a step where a PPO's actor and critic both overflowed
    counts 2), else one per step the scale fell; never fewer than DeepSpeed's own `skipped=` count says."""
    ov = metrics.get(OVERFLOW)
    counted = int(ov[ov > 0].sum()) if ov is not None else len(steps)
    return max(counted, _stated_skips(metrics) or 0)


def _stated_skips(metrics: Metrics) -> int | None:
    """DeepSpeed's own count of skipped updates at its last progress line (summed over its engines there), or None."""
    said = metrics.get(DEEPSPEED_SKIPPED)
    return int(said.dropna().iloc[-1]) if said is not None and len(said.dropna()) else None


def longest_consecutive_run(steps: list[int]) -> tuple[int, int]:
    """(first step, length) of the longest stretch of overflows on consecutive steps."""
    best, start, length = (steps[0], 1) if steps else (0, 0), None, 0
    for i, s in enumerate(steps):
        if i and s - steps[i - 1] <= 1:
            length += 1
        else:
            start, length = s, 1
        if length > best[1]:
            best = (start, length)
    return best


def detect_loss_scale_overflow(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """One finding: `loss_scale_overflow` error at the floor or warning for a storm, `skipped_steps` warning for a
    few."""
    steps = overflow_steps(metrics)
    floor_step = _floor_step(metrics, thresholds)
    if not steps and floor_step is None:
        return []
    storm_start, storm_len = longest_consecutive_run(steps)
    scale = metrics.get(SCALE)
    lowest = float(np.nanmin(scale.to_numpy())) if scale is not None and len(scale) else None
    count = overflow_count(metrics, steps)
    evidence = {"n_overflows": count, "first_step": steps[0] if steps else None, "longest_run": storm_len,
                "longest_run_start": storm_start if steps else None, "lowest_scale": lowest, "floor_step": floor_step}
    recovered = _rose_after(scale, floor_step)
    # no overflow line read is no "after 0 overflows" (FPT-VVU_ViVidBot_fp16: every step overflowed, the lines unread)
    after = f" after {plural(count, 'overflow')}" if steps else ""
    if floor_step is not None and recovered is not None:
        step, value = recovered
        message = (f"fp16 overflow storm: the loss scale fell to {format_number(lowest)} by step {floor_step}{after} "
                   f"(each overflow an update skipped; a scale under 1 means the gradients "
                   f"overflow fp16 even unscaled), then rose again ({format_number(value)} at step {step}): the run "
                   "went on, but look at why its gradients reach the edge of fp16's range (bf16 has no scaler).")
        first = steps[0] if steps else floor_step
        return [Finding("loss_scale_overflow", "warning", first, message, end_step=floor_step, metric=SCALE,
                        evidence={**evidence, "rose_again_at": step})]
    if floor_step is not None:
        message = (f"the fp16 loss scale fell to its floor "
                   f"{format_number(lowest if lowest is not None else thresholds.loss_scale_floor)} at step "
                   f"{floor_step}{after}: every step overflows and nothing is updated "
                   f"(DeepSpeed stops a run there; apex's scaler goes on halving).")
        first = steps[0] if steps else floor_step
        return [Finding("loss_scale_overflow", "error", first, message, end_step=floor_step, metric=SCALE,
                        evidence=evidence)]
    if storm_len >= thresholds.overflow_storm_count and not _calibration(metrics, steps, storm_start, storm_len):
        message = (f"fp16 overflow storm: {storm_len} overflows in a row from step {storm_start} "
                   f"({count} in all, loss scale down to "
                   f"{format_number(lowest) if lowest is not None else 'unknown'}).")
        return [Finding("loss_scale_overflow", "warning", storm_start, message,
                        end_step=storm_start + storm_len - 1, metric=SCALE, evidence=evidence)]
    one = count == 1  # one skip is said as one: "1 update ... from step 3 (isolated overflows) those batches"
    kind = ("overflows at the start, the scaler searching down from its initial scale" if storm_len >=
            thresholds.overflow_storm_count else "an isolated overflow" if one else "isolated overflows")
    message = (f"{plural(count, 'update')} skipped by the fp16 loss scaler {'at' if one else 'from'} step "
               f"{steps[0]} ({kind}, loss scale down to {format_number(lowest) if lowest is not None else 'unknown'}): "
               f"the scaler did its job, but {'that batch' if one else 'those batches'} taught the model nothing. A "
               "few at the start are the scaler finding its level; more later mean the loss or gradients reach the "
               "edge of fp16's range (bf16 has no scaler).")
    return [Finding("skipped_steps", "warning", steps[0], message, end_step=steps[-1], metric=SCALE,
                    evidence={**evidence, "deepspeed_overflow": True})]


_CALIBRATION_SHARE = 0.2  # a start-up search ends within this share of the logged steps
_LATER_SHARE = 0.05  # ... and the overflows after it at most this share of the steps after it, the scale up between


def _calibration(metrics: Metrics, steps: list[int], storm_start: int, storm_len: int) -> bool:
    """Whether the overflows in a row are the scaler's start-up search: they begin at the log's first steps (Megatron
    starts at 2**32, DeepSpeed at 2**16, and each halves until a step fits), end within `_CALIBRATION_SHARE` of the
    log, and make up nearly all of its overflows: those after it at most 2, or at most `_LATER_SHARE` of the steps
    logged after it where the scale rose again in between (the scaler found its level and probes up from it:
    gouqi666_deep-speed-chat's 65536 down to 2048 in steps 0-5, then 4 in the next 100 steps at 8192, 4096, 2048; a
    scale that only falls on is overflowing for good). Each is a skipped update, not a storm: training goes on."""
    scale = metrics.get(SCALE)
    logged = scale.index if scale is not None and len(scale) else None
    if logged is None:
        return False
    first = int(logged[0])
    last = max([int(logged[-1])] + [int(s.index[-1]) for s in metrics.values() if len(s)])
    storm_end = storm_start + storm_len - 1
    later = len(steps) - storm_len
    few_later = later <= 2 or (later <= _LATER_SHARE * (last - storm_end) and _rose_since(scale, storm_end))
    return storm_start <= first + 2 and storm_end - first <= _CALIBRATION_SHARE * (last - first) and few_later


def _rose_since(scale, step: int) -> bool:
    """Whether the loss scale logged after `step` is ever higher than the value before it."""
    after = scale[scale.index > step].dropna().to_numpy()
    return bool(len(after) > 1 and (after[1:] > after[:-1]).any())


def _rose_after(scale, floor_step: int | None) -> tuple[int, float] | None:
    """(step, scale) where the loss scale rose above its lowest value for the last time after the floor step, where
    it ends above that value; else None (a scale that ends at its lowest has not come back)."""
    if scale is None or floor_step is None:
        return None
    after = scale[scale.index >= floor_step].dropna()
    if len(after) < 2 or not float(after.iloc[-1]) > float(after.min()):
        return None
    last_low = after.index[after.to_numpy() <= float(after.min())][-1]
    higher = after[after.index > last_low]
    return int(higher.index[0]), float(higher.iloc[0])


def _floor_step(metrics: Metrics, thresholds: Thresholds) -> int | None:
    """The first step where the scale is at or under its floor, or DeepSpeed said it is at its minimum."""
    candidates = []
    at_min = metrics.get(AT_MINIMUM)
    if at_min is not None:
        hit = at_min.index[at_min.to_numpy() > 0]
        if len(hit):
            candidates.append(int(hit[0]))
    scale = metrics.get(SCALE)
    if scale is not None:
        hit = scale.index[scale.to_numpy() <= thresholds.loss_scale_floor]
        if len(hit):
            candidates.append(int(hit[0]))
    return min(candidates) if candidates else None

