"""`forensics compare`: what differs between a run that worked and one that broke.

`compare(paths)` analyzes each run, aligns their configurations key by key, ranks the keys on
which they disagree by how likely each is to matter for what went wrong in the run that broke
(`causes.config_risk`), finds where the runs part on each shared metric (`analyzers.parting`),
and, where two runs have checkpoints at the same step, which blocks differ most.
The result is a `Comparison`; its `to_dict()` is the `compare --json` contract.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from .analysis import Analysis, analyze
from .analyzers.parting import PARTING_METRICS, Parting, parting_point
from .causes.config_risk import RankedDifference, rank_differences
from .findings import json_safe

Progress = Callable[[str], None]

# Metrics compared for the parting point, in the order a reader wants them.
_STATUS_ORDER = {"broken": 0, "warning": 1, "healthy": 2}


@dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: where it is, its verdict and what kind of run it is."""

    path: str
    status: str
    first_incident: dict[str, Any] | None
    run_profile: dict[str, Any] | None
    samples_per_step: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "first_incident": self.first_incident,
                "run_profile": self.run_profile, "samples_per_step": self.samples_per_step}


@dataclass(frozen=True)
class Comparison:
    """What differs between runs, ranked.

    Fields:
        runs: one ComparedRun per path, in the order given.
        config_diff: the keys on which the runs disagree, highest risk first.
        parted: per metric, the first point where a run leaves the reference run's band.
        reference: index of the run the others are measured against (the healthiest, else the first).
        block_diff: blocks that differ most between checkpoints saved at the same step (DataFrame:
            block, step, rel_change, checkpoint_a, checkpoint_b), empty when no step matches.
        analyses: the full Analysis of each run, for a notebook (not in the JSON).
    """

    runs: tuple[ComparedRun, ...]
    config_diff: tuple[RankedDifference, ...]
    parted: tuple[Parting, ...]
    reference: int
    block_diff: pd.DataFrame = field(default_factory=pd.DataFrame)
    analyses: tuple[Analysis, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `compare --json` contract (fields may be added, never renamed or dropped)."""
        return json_safe({
            "runs": [r.to_dict() for r in self.runs],
            "reference": self.reference,
            "config_diff": [d.to_dict() for d in self.config_diff],
            "parted": [p.to_dict() for p in self.parted],
            "block_diff": self.block_diff.to_dict(orient="records"),
        })

    def __str__(self) -> str:
        verdicts = ", ".join(f"{Path(r.path).name}: {r.status}" for r in self.runs)
        top = next((d for d in self.config_diff if d.risk == "high"), None)
        lead = f"; top difference {top.key}" if top else ""
        return f"<Comparison of {len(self.runs)} runs ({verdicts}); {len(self.config_diff)} differing keys{lead}>"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from .report.compare_html import render_compare_html  # matplotlib: only when shown

        return render_compare_html(self, fragment=True)


def compare(paths: Sequence, check_checkpoints: bool = True, workers: int | None = None,
            progress: Progress | None = None) -> Comparison:
    """Compare two or more runs: ranked configuration differences, where they part, verdicts side by side.

    >>> import json, tempfile
    >>> def run(lr, fp16, losses):
    ...     d = Path(tempfile.mkdtemp())
    ...     hist = [{"step": 10 * i, "loss": v, "grad_norm": 1.0, "learning_rate": lr} for i, v in enumerate(losses, 1)]
    ...     state = {"global_step": 10 * len(losses), "log_history": hist}
    ...     _ = (d / "trainer_state.json").write_text(json.dumps(state))
    ...     return d
    >>> good = run(1e-5, False, [3.0, 2.5, 2.2, 2.0, 1.9, 1.8, 1.7, 1.7])
    >>> bad = run(1e-5, True, [3.0, 2.5, 2.2, 2.0, float("nan"), float("nan"), float("nan"), float("nan")])
    >>> c = compare([good, bad])
    >>> [r.status for r in c.runs], c.parted[0].metric, c.parted[0].step
    (['healthy', 'broken'], 'loss', 50)
    """
    if len(paths) < 2:
        raise ValueError("compare needs at least two runs")
    analyses = []
    for i, path in enumerate(paths, 1):
        if progress:
            progress(f"run {i} of {len(paths)}: {path}")
        analyses.append(analyze(path, check_checkpoints=check_checkpoints, workers=workers))
    return comparison_of(analyses)


def comparison_of(analyses: Sequence[Analysis]) -> Comparison:
    """The Comparison of runs already analyzed (what `compare` does after reading them)."""
    runs = tuple(_compared_run(a) for a in analyses)
    reference = min(range(len(runs)), key=lambda i: (-_STATUS_ORDER.get(runs[i].status, 0), i))
    broken = _broken_index(analyses, reference)
    kinds = {f.kind for f in analyses[broken].findings if f.severity != "info"} if broken is not None else set()
    keys, values, sources = aligned_config(analyses)
    unrecorded = [not_recorded_in(analyses, key) for key in keys]
    diff = rank_differences(keys, values, sources, kinds, broken, unrecorded)
    parted = tuple(_partings(analyses, runs, reference))
    return Comparison(runs=runs, config_diff=tuple(diff), parted=parted, reference=reference,
                      block_diff=_block_diff(analyses, reference), analyses=tuple(analyses))


def aligned_config(analyses: Sequence[Analysis]) -> tuple[list[str], list[list[Any]], list[list[str | None]]]:
    """The keys whose (most authoritative) values differ between the runs, with each run's value and file.

    A derived `precision` key (fp16 / bf16 / fp32, from the training arguments and the DeepSpeed
    config) is added so that the one decision behind several flags shows as one row.
    """
    per_run = [_config_view(a) for a in analyses]
    keys = sorted(set().union(*per_run))
    out_keys, out_values, out_sources = [], [], []
    for key in keys:
        seen = [view.get(key, (None, None)) for view in per_run]
        if len({_canonical(v) for v, _ in seen}) > 1:
            out_keys.append(key)
            out_values.append([v for v, _ in seen])
            out_sources.append([s for _, s in seen])
    return out_keys, out_values, out_sources


def _config_view(analysis: Analysis) -> dict[str, tuple[Any, str | None]]:
    config = analysis.config
    view = {key: (config.get(key), config.source_of(key)) for key in config.values}
    precision = _precision(config) or _profile_precision(analysis)
    if precision is not None:
        view["precision"] = precision
    return view


def _profile_precision(analysis: Analysis) -> tuple[str, str] | None:
    """The precision the run profile read from the run's other files (a log's banner, a checkpoint's dtype), where
    the configuration does not say it."""
    precision = getattr(getattr(analysis, "run_profile", None), "precision", None)
    return (precision, "run profile") if precision in ("fp16", "bf16", "fp32") else None


def not_recorded_in(analyses: Sequence[Analysis], key: str) -> tuple[int, ...]:
    """The runs whose configuration holds no key of `key`'s kind (its `ds.` / `model.` ... prefix, or a plain
    training argument): there an absent value is unknown, not the default."""
    kind = _kind_of(key)
    if kind is None:
        return ()
    return tuple(i for i, a in enumerate(analyses)
                 if key not in a.config.values and not any(_kind_of(k) == kind for k in a.config.values))


def _kind_of(key: str) -> str | None:
    """`ds` for `ds.fp16.enabled`, "" for a plain training argument; None for the derived `precision`."""
    if key == "precision":
        return None
    return key.split(".", 1)[0] if "." in key else ""


def _precision(config) -> tuple[str, str] | None:
    for key, name in (("fp16", "fp16"), ("ds.fp16.enabled", "fp16"), ("bf16", "bf16"), ("ds.bf16.enabled", "bf16")):
        if config.get(key) is True:
            return name, config.source_of(key)
    if config.get("fp16") is False and config.get("bf16") is False:
        return "fp32", config.source_of("fp16")
    return None


def _canonical(value: Any) -> str:
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return repr(int(value))
    return repr(value)


def _compared_run(analysis: Analysis) -> ComparedRun:
    profile = getattr(analysis, "run_profile", None)
    profile_dict = profile.to_dict() if hasattr(profile, "to_dict") else None
    first = analysis.first_incident.to_dict() if analysis.first_incident else None
    return ComparedRun(str(analysis.path), analysis.status, json_safe(first), json_safe(profile_dict),
                       _samples_per_step(analysis.config))


def _samples_per_step(config) -> float | None:
    """Samples per optimizer step per device (batch x accumulation), where the configuration says it."""
    batch = config.get("per_device_train_batch_size") or config.get("ds.train_micro_batch_size_per_gpu")
    accumulation = config.get("gradient_accumulation_steps") or config.get("ds.gradient_accumulation_steps") or 1
    try:
        return float(batch) * float(accumulation) if batch else None
    except (TypeError, ValueError):
        return None


def _broken_index(analyses: Sequence[Analysis], reference: int) -> int | None:
    """The run whose failure the differences are ranked for: the worst one that is not the reference."""
    others = [i for i in range(len(analyses)) if i != reference]
    worst = min(others, key=lambda i: (_STATUS_ORDER.get(analyses[i].status, 2), i))
    return worst if analyses[worst].status != "healthy" else None


def _partings(analyses: Sequence[Analysis], runs: Sequence[ComparedRun], reference: int) -> list[Parting]:
    scales = [r.samples_per_step for r in runs]
    by_samples = all(scales) and len(set(scales)) > 1
    axis = "samples" if by_samples else "step"
    out = []
    ref_timeline = analyses[reference].timeline
    for metric in _shared_metrics(analyses):
        ref = ref_timeline.series(metric)
        for i, analysis in enumerate(analyses):
            if i == reference:
                continue
            hit = parting_point(ref, analysis.timeline.series(metric),
                                scale_ref=scales[reference] if by_samples else 1.0,
                                scale_other=scales[i] if by_samples else 1.0)
            if hit:
                step, position, value, ref_value, band, nonfinite = hit
                out.append(Parting(metric, i, reference, step, position, axis, value, ref_value, band, nonfinite))
    return sorted(out, key=lambda p: (p.position, PARTING_METRICS.index(p.metric) if p.metric in PARTING_METRICS
                                      else len(PARTING_METRICS)))


def _shared_metrics(analyses: Sequence[Analysis]) -> list[str]:
    shared = set.intersection(*(set(a.timeline.metrics) for a in analyses))
    return [m for m in PARTING_METRICS if m in shared]


def _block_diff(analyses: Sequence[Analysis], reference: int) -> pd.DataFrame:
    """Per block, the relative difference between checkpoints of the reference and another run at one step."""
    from .checkpoints import diff_checkpoints

    columns = ["block", "step", "rel_change", "checkpoint_a", "checkpoint_b"]
    ref_ckpts = {c.step: c for c in analyses[reference].checkpoints if c.step is not None}
    for i, analysis in enumerate(analyses):
        if i == reference:
            continue
        shared = sorted(set(ref_ckpts) & {c.step for c in analysis.checkpoints if c.step is not None})
        if not shared:
            continue
        step = _last_comparable_step(shared, ref_ckpts, analysis)
        other = next(c for c in analysis.checkpoints if c.step == step)
        try:
            changes = diff_checkpoints(ref_ckpts[step].ref.path, other.ref.path, workers=1)
        except Exception:  # noqa: BLE001 - unrelated models or unreadable files: no block view, the rest stands
            return pd.DataFrame(columns=columns)
        return _per_block(changes, step, ref_ckpts[step].name, other.name, columns)
    return pd.DataFrame(columns=columns)


def _last_comparable_step(shared: list[int], ref_ckpts: dict, analysis: Analysis) -> int:
    """The last shared step before the other run's weights went bad, else the first shared step."""
    bad = analysis.first_bad_checkpoint
    before = [s for s in shared if bad is None or bad.step is None or s < bad.step]
    return before[-1] if before else shared[0]


def _per_block(changes: pd.DataFrame, step: int, name_a: str, name_b: str, columns) -> pd.DataFrame:
    if changes.empty:
        return pd.DataFrame(columns=columns)
    # Tensors outside the repeated blocks (embeddings, lm_head) stand for themselves.
    frame = changes.assign(block=changes["block"].where(changes["block"].notna(), changes["tensor"]))
    per = frame.groupby("block")["rel_change"].max().sort_values(ascending=False).head(10)
    return pd.DataFrame({"block": per.index, "step": step, "rel_change": per.to_numpy(),
                         "checkpoint_a": name_a, "checkpoint_b": name_b})[columns]
