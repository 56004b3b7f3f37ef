"""Schedulers that start over by design, as a run's configuration names them: a schedule seen starting over in the
log (`lr_anomaly`'s `started_over` warnings) is then the plan, not a resume that lost the scheduler's state.

    findings = without_planned_restarts(findings, (config.get("lr_scheduler_type"), config.get("ds.scheduler.type")),
                                        config.get("lr_scheduler_kwargs"))
"""
from __future__ import annotations

import re
from typing import Any

from ..findings import Finding

# Schedulers that start over by design: HF cosine_with_restarts and warmup_stable_decay (stage after stage), SGDR
# (CosineAnnealingWarmRestarts), CyclicLR / DeepSpeed OneCycle, DeepSpeed LRRangeTest (a staircase), Megatron's WSD.
_RESTARTING_SCHEDULERS = re.compile(r"restart|stable_decay|\bwsd\b|cycl|range_?test|stage", re.IGNORECASE)
# Schedules that never decay: one that a log shows decaying is not the configured one (a custom, stage-wise plan).
_FIXED_RATE_SCHEDULERS = {"constant", "constant_with_warmup"}


def without_planned_restarts(findings: list[Finding], scheduler_types: tuple, scheduler_kwargs: Any) -> list[Finding]:
    """`findings` less the schedule-started-over warnings (`started_over`: mid-decay, with its warm-up, or after its
    end) where the run's configuration names a scheduler that starts over by design (`scheduler_types`:
    lr_scheduler_type, Megatron's lr_decay_style, DeepSpeed's scheduler.type; `scheduler_kwargs`: lr_scheduler_kwargs
    with cycles), or a fixed rate while the log shows it decaying (a custom plan the configuration does not
    describe): a new stage or cycle is then the plan, not a resume that lost the scheduler's state."""
    if not _restarts_by_design(scheduler_types, scheduler_kwargs):
        return findings
    return [f for f in findings if not (f.kind == "lr_anomaly" and f.evidence.get("started_over"))]


def _restarts_by_design(scheduler_types: tuple, scheduler_kwargs: Any) -> bool:
    names = [str(t).strip() for t in scheduler_types if isinstance(t, str) and t.strip()]
    if any(_RESTARTING_SCHEDULERS.search(name) or name.lower() in _FIXED_RATE_SCHEDULERS for name in names):
        return True
    kwargs = scheduler_kwargs if isinstance(scheduler_kwargs, dict) else {}
    cycles = kwargs.get("num_cycles", kwargs.get("cycles"))
    return kwargs.get("cycle") is True or (isinstance(cycles, (int, float)) and not isinstance(cycles, bool)
                                           and cycles > 1)
