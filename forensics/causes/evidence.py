"""The facts the cause rules look at, read once from the config, timeline, findings and checkpoints.

Every helper returns plain values (numbers, steps, names) plus, where it helps a report,
the file or source that said it, so a rule can write evidence sentences that name them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ..analyzers.metrics import Metrics, metrics_from_rows
from ..analyzers.metrics import format_number
from ..analyzers.metrics import is_preference_log, masked_loss_steps
from ..analyzers.skipped_steps import skipped_step_points
from ..analyzers.weights import safe_checkpoint
from ..checkpoints.blocks import block_index
from ..checkpoints.types import CheckpointInfo, first_bad_of, last_good_before_of
from ..config import RunConfig, Thresholds
from ..findings import Finding
from ..profile import RunProfile
from ..timeline import Timeline
from .log_start import start_unshown


# Findings of a run that became unstable (see Facts.unstable).
INSTABILITY_KINDS = frozenset({
    "nonfinite_metric", "masked_nan_loss", "loss_collapse", "grad_norm_spike", "loss_spike", "divergence",
    "loss_scale_overflow", "skipped_steps", "nonfinite_weights", "weights_over_bound", "weights_near_fp16_limit",
    "lr_anomaly", "nonfinite_optimizer_state", "update_precursor", "reward_decline",
})


@dataclass
class Facts:
    """Everything a rule may use; `broken` and `troubled` summarise how bad the run is."""

    config: RunConfig
    timeline: Timeline
    findings: list[Finding]
    checkpoints: list[CheckpointInfo]
    thresholds: Thresholds
    profile: RunProfile | None = None  # what kind of run (method, objective, size): advice fits it

    @property
    def live_findings(self) -> list[Finding]:
        """Findings of the history that stands (not of attempts a resume threw away)."""
        return [f for f in self.findings if not f.abandoned]

    @property
    def broken(self) -> bool:
        """An error-level finding or a checkpoint with non-finite weights."""
        return any(f.severity == "error" for f in self.live_findings) or any(c.is_nonfinite for c in self.checkpoints)

    @property
    def troubled(self) -> bool:
        """Anything at warning level or worse: something to explain."""
        return self.broken or any(f.severity in ("warning", "error") for f in self.live_findings)

    @property
    def unstable(self) -> bool:
        """Trouble an optimizer setting (learning rate, warm-up, clipping) can explain: something blew up,
        spiked or went non-finite, or the weights or the reward ran away. Memorization, overfitting and a log
        that shows no learning are not this kind: a lower rate or a warm-up is not their fix; nor is a schedule
        that ran out and started over or climbed back (`schedule_shape`): the scheduler's settings are."""
        return any(c.is_nonfinite for c in self.checkpoints) or any(
            f.kind in INSTABILITY_KINDS and f.severity in ("warning", "error") and not not_the_optimizer(f)
            for f in self.live_findings)

    @property
    def unstable_beyond_skips(self) -> bool:
        """`unstable` by something more than the fp16 scaler skipping updates: a few skipped steps are the
        scaler doing its job (VERDICTS.md), which the learning rate, warm-up or clipping is no answer to."""
        return any(c.is_nonfinite for c in self.checkpoints) or any(
            f.kind in INSTABILITY_KINDS - {"skipped_steps"} and f.severity in ("warning", "error")
            and not not_the_optimizer(f) for f in self.live_findings)

    @cached_property
    def first_unstable(self) -> Finding | None:
        """The earliest standing finding of the kind `unstable_beyond_skips` counts: the trouble an optimizer setting
        would have to explain, and so the step up to which the settings in force are judged. Where one of them broke
        the run, the earliest that did: a spike the run recovered from before it did not break it, and the rate in
        force at that spike is not the one the break ran at."""
        found = [f for f in self.live_findings if f.kind in INSTABILITY_KINDS - {"skipped_steps"}
                 and f.severity in ("warning", "error") and not not_the_optimizer(f)]
        broke = [f for f in found if f.severity == "error"]
        return min(broke or found, key=lambda f: f.step) if found else None

    @property
    def before_any_update(self) -> bool:
        """The trouble came before the run had made any update at a non-zero learning rate, so no optimizer setting
        (rate, warm-up, clipping) had acted yet: at the first step (its loss and gradient are computed on the weights
        as loaded), or with the rate logged as 0 up to it (every fp16 step overflowed and was skipped). A first line
        numbered 1 by the reader is the run's first step only where the lines show it (`log_start.start_unshown`)."""
        first = self.first_unstable
        if first is None:
            return False
        lr = self.timeline.series("learning_rate")
        upto = lr[(lr.index <= first.step) & np.isfinite(lr.to_numpy(dtype="float64"))]
        at_the_start = first.step <= 1 and self.start_unshown is None
        return at_the_start or (len(upto) > 0 and bool((upto.to_numpy() == 0.0).all()))

    @cached_property
    def start_unshown(self) -> str | None:
        """Why the log's first point is not shown to be the run's first step (a paste from mid-run whose lines the
        reader numbered), or None (`log_start.start_unshown`)."""
        return start_unshown(self.timeline)

    @property
    def opens_broken(self) -> bool:
        """The first trouble is at the first logged point of a log not shown to begin with the run
        (`start_unshown`): it began before the log did, at a rate and under settings the log does not show."""
        first, rows = self.first_unstable, self.timeline.final()
        return first is not None and not rows.empty and first.step <= int(rows["step"].min()) \
            and self.start_unshown is not None

    def of_kind(self, *kinds: str) -> list[Finding]:
        return [f for f in self.live_findings if f.kind in kinds]

    def series(self, metric: str) -> pd.Series:
        return self.timeline.series(metric)

    @cached_property
    def metrics(self) -> Metrics:
        """The final history as the analyzers see it: each metric's logged points only (no gap is a NaN)."""
        return metrics_from_rows(self.timeline.final())

    @cached_property
    def masked_nan_steps(self) -> list[int]:
        """Steps where loss is logged as exactly 0.0 while grad_norm is NaN/Inf (HF's NaN filter at work)."""
        return [int(s) for s in masked_loss_steps(self.metrics)]

    @cached_property
    def safe_checkpoint(self) -> CheckpointInfo | None:
        """The last checkpoint safe to resume from (`Analysis.last_good_checkpoint`): finite, and saved before the
        first incident that harms the weights."""
        return safe_checkpoint(self.checkpoints, self.live_findings)

    def finite_elsewhere(self, metric: str, steps: list[int]) -> list[str]:
        """The logs of the run that hold a finite `metric` at every one of `steps`, where the history kept the NaN/Inf
        another log showed (`timeline` keeps the damage): the non-finite value is one log's word against theirs."""
        if not steps:
            return []
        rows = self.timeline.frame
        rows = rows[~rows["abandoned"] & (rows["metric"] == metric) & rows["step"].isin(steps)]
        finite = rows[np.isfinite(rows["value"].to_numpy(dtype="float64"))]
        counts = finite.groupby("source")["step"].nunique()
        return sorted(counts[counts == len(set(steps))].index)

    def nonfinite_steps(self, metric: str) -> list[int]:
        """Logged steps where `metric` is NaN/Inf, less the fp16 steps the loss scaler skipped harmlessly."""
        series = self.metrics.get(metric)
        if series is None:
            return []
        skipped = set(skipped_step_points(self.metrics, self.thresholds))
        return [s for s in nonfinite_steps(series) if s not in skipped]


def resume_advice(facts: Facts) -> str | None:
    """Where to resume from once the cause is fixed, naming the checkpoint; None where there is nothing to resume: the
    run got past its trouble (not broken), or no checkpoint saved before the trouble holds good weights."""
    good = facts.safe_checkpoint if facts.broken else None
    if good is None:
        return None
    return f"resume from {good.name}" + (f" (step {good.step})" if good.step is not None else "")


def evidence_value(value) -> str:
    """A value as evidence writes it: numbers as the findings write them (3e-04 -> '0.0003'), strings quoted."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        return repr(value) if isinstance(value, str) else str(value)
    return format_number(value)


def said(config: RunConfig, key: str, name: str | None = None) -> str:
    """'key=value (source)' for an evidence sentence, the setting called `name` where the run's own files name it so."""
    return f"{name or key}={evidence_value(config.get(key))} ({config.source_of(key)})"


def not_the_optimizer(finding: Finding) -> bool:
    """A finding whose trouble no optimizer setting explains: a schedule that ran out and restarted
    (`schedule_shape`), an evaluation that broke while training stayed finite (`training_finite`), preference
    pairs separated so far that the loss is ~0 (`saturated_pairs`: the objective met, its fix beta, epochs or
    harder pairs, not the precision or a warm-up), a diagnostic mean NaN now and then beside a sound training loss
    (`sporadic`: a batch with no tokens left to average over, its fix the truncation settings), a loss near 0 before
    the first pass over the data was over (`first_epoch`: targets trivial or handed to the model, its fix the
    labels; qwu01's and Vanh253333's collapses were told to warm up and lower the rate)."""
    return any(finding.evidence.get(key) for key in ("schedule_shape", "training_finite", "saturated_pairs",
                                                        "sporadic", "first_epoch"))


# --- timeline facts -------------------------------------------------------------------------

def nonfinite_steps(series: pd.Series) -> list[int]:
    values = series.to_numpy(dtype="float64")
    return [int(s) for s in series.index[~np.isfinite(values)]]


# grad_norm's climb is read from the median of its last few finite points before a step against the median of the rest
_CLIMB_RECENT = 3
CLIMB_MIN_POINTS = 6


def grad_norm_climb_before(facts: Facts, step: int, factor: float) -> tuple[float, float] | None:
    """(earlier level, recent level) of grad_norm over its finite points before `step`, where the median of the last
    `_CLIMB_RECENT` is at least `factor` times the median of those before them; None otherwise or where too few
    points were logged to read a climb from."""
    grad = facts.series("grad_norm")
    if grad.empty:
        return None
    before = grad[(grad.index < step) & np.isfinite(grad.to_numpy(dtype="float64"))]
    if len(before) < CLIMB_MIN_POINTS:
        return None
    recent = float(np.median(before.iloc[-_CLIMB_RECENT:]))
    baseline = float(np.median(before.iloc[:-_CLIMB_RECENT]))
    return (baseline, recent) if baseline > 0 and recent >= factor * baseline else None


def zero_loss_zero_grad_steps(facts: Facts) -> list[int]:
    """Steps where loss and grad_norm are both logged as exactly 0.0: no learning signal at all."""
    loss, grad = facts.metrics.get("loss"), facts.metrics.get("grad_norm")
    if loss is None or grad is None or is_preference_log(facts.metrics):
        return []  # a DPO/GRPO loss sits at 0 by construction; a zero gradient there is the reward's matter
    zero_loss = loss.index[loss.to_numpy() == 0.0]
    return [int(s) for s in zero_loss.intersection(grad.index[grad.to_numpy() == 0.0])]


def lr_points(timeline: Timeline) -> pd.Series:
    """The logged learning rate of the run as it ended (`final_run_rows`), finite and above zero (DeepSpeed fp16 logs
    0 before its first step)."""
    rows = final_run_rows(timeline)
    rows = rows[rows["metric"] == "learning_rate"]
    lr = pd.Series(rows["value"].to_numpy(), index=rows["step"].to_numpy(), name="learning_rate", dtype="float64")
    values = lr.to_numpy()
    return lr[np.isfinite(values) & (values > 0)]


# A last attempt whose first step is within this many of its own logging intervals of step 0 started over.
_STARTED_OVER = 2


def final_run_rows(timeline: Timeline) -> pd.DataFrame:
    """The final history less what an earlier run in the same log left standing before the last attempt's first step,
    where that attempt started over from step 0 (a second stage in one console, SFT then GRPO, each numbering its
    steps from the start): the rates and settings of that earlier run are not the ones the run as it ended trained
    at. A last attempt that resumed mid-run stands on the steps before it, which are kept."""
    rows = timeline.final()
    if rows.empty:
        return rows
    last = int(rows["segment"].iloc[-1])  # final() is sorted by step: the attempt that logged the last step
    own = rows[rows["segment"] == last]
    first = int(own["step"].min())
    steps = np.unique(own["step"].to_numpy())
    interval = float(np.median(np.diff(steps))) if len(steps) >= 2 else 1.0
    if first > _STARTED_OVER * max(interval, 1.0):
        return rows
    earlier = (rows["segment"] != last) & (rows["source"] == own["source"].iloc[0]) & (rows["step"] < first)
    return rows[~earlier]


# A configured rate this much above the highest logged before the trouble, with the logged rate still rising there,
# was not reached by then (a warm-up under way); below it, the two differ by the logging's sampling and rounding.
_NOT_REACHED = 1.5


def still_rising(lr: pd.Series) -> bool:
    """The logged rate climbed to its last point: a warm-up not finished (a flat log that disagrees with the
    configured rate is another matter: which source is right it cannot tell)."""
    return len(lr) >= 2 and float(lr.iloc[-1]) >= float(lr.max()) and float(lr.iloc[-1]) > float(lr.iloc[0])


def _highest_before_said(lr: pd.Series, before: pd.Series, step: int, first) -> str:
    """Where the highest logged rate up to the trouble was: a peak only where no later point is higher (ChristianPE1's
    rate, 1.546 at the trouble and 2.0e8 at the end, did not peak at the trouble)."""
    value = evidence_value(before.max())
    if float(lr.max()) <= float(before.max()):
        return f"logged learning_rate peaked at {value} (step {step})"
    if step == first.step:
        return f"logged learning_rate was {value} (step {step}, where the trouble began; higher after it)"
    return (f"logged learning_rate was at most {value} up to the trouble at step {first.step} (step {step}; higher "
            "after it)")


def peak_lr(facts: Facts) -> tuple[float | None, list[str]]:
    """The highest learning rate in force up to the first trouble (`Facts.first_unstable`; the whole log when there is
    none), and sentences saying where it was seen. A rate the schedule reached only after the trouble, or a configured
    peak a warm-up still rising had not reached by then, did not cause it: there the logged rate is judged."""
    seen: list[tuple[float, str]] = []
    lr = lr_points(facts.timeline)
    first = facts.first_unstable
    before = lr[lr.index <= first.step] if first is not None else lr
    if len(before):
        step = int(before.idxmax())
        seen.append((float(before.max()), _highest_before_said(lr, before, step, first)))
    for key in ("learning_rate", "ds.optimizer.params.lr", "ds.scheduler.params.warmup_max_lr"):
        value = facts.config.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            if seen and value > _NOT_REACHED * seen[0][0] and still_rising(before):
                return seen[0][0], [seen[0][1], f"configured {said(facts.config, key)}, not reached by then"]
            warm = _configured_warm_up(facts)
            if not seen and first is not None and warm is not None and warm[0] > first.step:
                in_force = float(value) * first.step / warm[0]
                return in_force, [f"configured {said(facts.config, key)}, reached only after {warm[1]}: a linear "
                                  f"warm-up had it at {evidence_value(in_force)} at most by the trouble at step "
                                  f"{first.step}"]
            seen.append((float(value), f"configured {said(facts.config, key)}"))
            break
    if not seen:
        return None, []
    return max(v for v, _ in seen), [s for _, s in seen]


def _configured_warm_up(facts: Facts) -> tuple[float, str] | None:
    """The warm-up the config sets, in steps, with where it says so: warmup_steps (DeepSpeed's warmup_num_steps), or
    warmup_ratio of a configured max_steps; None where it sets none or its length in steps is not known."""
    c = facts.config
    for key in ("warmup_steps", "ds.scheduler.params.warmup_num_steps"):
        value = c.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value), said(c, key)
    ratio, total = c.get("warmup_ratio"), c.get("max_steps")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (ratio, total)):
        return float(ratio) * float(total), f"{said(c, 'warmup_ratio')} of {said(c, 'max_steps')}"
    return None


def max_finite(series: pd.Series) -> tuple[float, int] | None:
    values = series.to_numpy(dtype="float64")
    finite = np.isfinite(values)
    if not finite.any():
        return None
    i = int(np.argmax(np.where(finite, values, -np.inf)))
    return float(values[i]), int(series.index[i])


# --- precision --------------------------------------------------------------------------------

def precision_sources(config: RunConfig, kind: str) -> list[str]:
    """Where the run says `kind` ("fp16" or "bf16") mixed precision was on, as 'key=True (source)'."""
    out = []
    for key in (kind, f"ds.{kind}.enabled"):
        for seen in config.values.get(key, []):
            if seen.value is True or (type(seen.value) is int and seen.value == 1):
                out.append(f"{key}={seen.value} ({seen.source})")
    return out


# --- blocks -----------------------------------------------------------------------------------

_EMBEDDING = re.compile(r"(embed_tokens|wte|wpe|word_embeddings|embed_in|shared)\b")


def is_embedding(name: str) -> bool:
    return block_index(name) is None and bool(_EMBEDDING.search(name))


def number_of_blocks(facts: Facts) -> tuple[int | None, str]:
    """How many blocks the model has: config num_hidden_layers, else the highest block index in checkpoint stats."""
    layers = facts.config.get("model.num_hidden_layers")
    if isinstance(layers, int) and not isinstance(layers, bool) and layers > 0:
        return layers, f"num_hidden_layers={layers} ({facts.config.source_of('model.num_hidden_layers')})"
    indices = []
    for info in facts.checkpoints:
        if info.stats is not None and "name" in info.stats:
            indices += [i for i in map(block_index, info.stats["name"].astype(str)) if i is not None]
    if indices:
        return max(indices) + 1, f"{max(indices) + 1} blocks seen in the checkpoint tensors"
    return None, ""


def first_bad_checkpoint(facts: Facts) -> CheckpointInfo | None:
    return first_bad_of(facts.checkpoints)


def last_good_before(facts: Facts, bad: CheckpointInfo) -> CheckpointInfo | None:
    return last_good_before_of(facts.checkpoints, bad)
