"""Every run of an experiment tracker's store, one verdict each: `forensics analyze mlruns/` without --run.

A W&B folder or an MLflow store with several runs and nothing else (see `ingest.trackers`) is
analyzed run by run, each from its own logs alone (checkpoints are not opened: a store does not
say which run wrote them). `analyze_each(path)` returns a `StoreAnalysis`; its `to_dict()` is
what `analyze --json` prints for such a store:

    {"path": ..., "status": the worst status of the runs analyzed ("healthy" | "warning" | "broken"),
     "runs": [{"run": TrackerRun fields, "analysis": the `analyze --json` object of that run alone,
               or null with "reason": why it could not be analyzed (no metric logged)}, ...],
     "skipped": [...], "version": ...}
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._version import __version__
from .analysis import Analysis, Progress, analyze_records
from .config import Thresholds
from .errors import NotARunDirectory
from .findings import Skipped
from .ingest import read_logs
from .ingest.trackers import records_of, tracker_runs
from .run import discover
from .tracker_run import TrackerRun

_SEVERITY = {"healthy": 0, "warning": 1, "broken": 2}


@dataclass(frozen=True)
class RunVerdict:
    """One run of the store: its analysis, or why there is none (`reason`)."""

    run: TrackerRun
    analysis: Analysis | None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run.to_dict(), "analysis": self.analysis.to_dict() if self.analysis else None,
                "reason": self.reason or None}


@dataclass(frozen=True)
class StoreAnalysis:
    """The runs of a tracker store (W&B folder, MLflow store), each analyzed alone, in the order read."""

    path: Path
    runs: tuple[RunVerdict, ...]
    skipped: tuple[Skipped, ...] = field(default_factory=tuple)

    @property
    def status(self) -> str | None:
        """The worst status of the runs analyzed; None when not one run could be analyzed."""
        seen = [v.analysis.status for v in self.runs if v.analysis is not None]
        return max(seen, key=_SEVERITY.__getitem__) if seen else None

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "status": self.status, "runs": [v.to_dict() for v in self.runs],
                "skipped": [s.to_dict() for s in self.skipped], "version": __version__}


def analyze_each(path, thresholds: Thresholds | None = None, progress: Progress | None = None) -> StoreAnalysis:
    """Analyze every tracker run under `path` on its own (logs only), one RunVerdict each.

    Raises NotARunDirectory when the path holds no tracker run.
    """
    layout = discover(path)
    records, skipped = read_logs(layout, progress)
    runs = [run for run in tracker_runs(records) if run.status != "deleted"]
    if not runs:
        raise NotARunDirectory(path, "no W&B or MLflow run found")
    verdicts = []
    for run in runs:
        try:
            analysis = analyze_records(path, layout, records_of(records, run), [], thresholds, check_checkpoints=False)
        except NotARunDirectory:
            verdicts.append(RunVerdict(run, None, "no metric logged"))
            continue
        verdicts.append(RunVerdict(run, analysis))
    return StoreAnalysis(Path(path), tuple(verdicts), tuple(layout.skipped + skipped))
