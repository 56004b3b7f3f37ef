"""Every run of an experiment tracker's store, one verdict each: `forensics analyze mlruns/` without --run.

A W&B folder or an MLflow store with several runs and nothing else (see `ingest.trackers`) is
analyzed run by run, each from its own logs alone (checkpoints are not opened: a store does not
say which run wrote them). `analyze_each(path)` returns a `StoreAnalysis`; its `to_dict()` is
what `analyze --json` prints for such a store:

    {"path": ..., "status": the worst status of the runs analyzed ("healthy" | "warning" | "broken"),
     "runs": [{"run": TrackerRun fields, "analysis": the `analyze --json` object of that run alone,
               or null with "reason": why it could not be analyzed (no metric logged)}, ...],
     "skipped": [...], "version": ...,
     "lead_run": the id of the leading run: the first run read of the worst status (null when none was analyzed),
     and every other top-level field of a single run's `analyze --json`, so that a script reading one reads both:
       findings, segments, causes, updates, checkpoints, tracker_runs: every run's records in the order the runs
         were read, each with a "run" key (its run id); findings then sorted by step and causes by confidence,
         as a run's are (stable);
         checkpoints stay [] (a store's are not opened);
       first_incident, run_profile, learning_evidence: the leading run's, with a "run" key; null (run_profile:
         every field unknown) when no run was analyzed;
       everything else (last_good_checkpoint, config_missing, config_conflicts, ...): the leading run's.}
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._version import __version__
from .analysis import Analysis, Progress, analyze_records
from .config import Thresholds
from .errors import NotARunDirectory
from .findings import Skipped
from .ingest import read_logs
from .ingest.trackers import records_of, tracker_runs
from .profile import RunProfile
from .discover.run import discover
from .tracker_run import TrackerRun

_SEVERITY = {"healthy": 0, "warning": 1, "broken": 2}
# The single-run fields that list records: a store's gathers every run's, each record naming its run.
_GATHERED = ("findings", "segments", "checkpoints", "causes", "updates", "tracker_runs")
# The single-run fields that are one record: a store's is the leading run's, naming it.
_OF_THE_LEAD = ("first_incident", "run_profile", "learning_evidence")


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

    def lead(self) -> RunVerdict | None:
        """The run the store's single-valued fields describe: the first run read of the worst status."""
        analyzed = [v for v in self.runs if v.analysis is not None]
        return max(analyzed, key=lambda v: _SEVERITY[v.analysis.status], default=None)

    def to_dict(self) -> dict[str, Any]:
        """The `analyze --json` object of a store (see the module docstring); each run's analysis made once."""
        runs = [v.to_dict() for v in self.runs]
        lead = self.lead()
        lead_id = lead.run.run_id if lead is not None else None
        data = next((r["analysis"] for v, r in zip(self.runs, runs) if v is lead), None) or _nothing_analyzed()
        data = {**data, "path": str(self.path), "status": self.status, "lead_run": lead_id, "runs": runs,
                "skipped": [s.to_dict() for s in self.skipped], "version": __version__}
        for key in _GATHERED:
            data[key] = [{**record, "run": r["run"]["run_id"]} for r in runs if r["analysis"]
                         for record in r["analysis"][key]]
        # the single-run orders, stable (run order within a step, within a confidence): findings by step, causes
        # likely before possible
        data["findings"].sort(key=lambda f: f["step"])
        data["causes"].sort(key=lambda c: c["confidence"] != "likely")
        for key in _OF_THE_LEAD:
            if data[key] is not None:
                data[key] = {**data[key], "run": lead_id}
        return data


def _nothing_analyzed() -> dict[str, Any]:
    """The single-run fields of a store where no run could be analyzed: nothing found, nothing known."""
    return {"first_incident": None, "findings": [], "segments": [], "checkpoints": [], "last_good_checkpoint": None,
            "first_bad_checkpoint": None, "causes": [], "run_profile": RunProfile().to_dict(), "updates": [],
            "learning_evidence": None, "tracker_runs": [], "config_missing": [], "config_conflicts": {},
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def analyze_each(path, thresholds: Thresholds | None = None, progress: Progress | None = None) -> StoreAnalysis:
    """Analyze every tracker run under `path` on its own (logs only), one RunVerdict each.

    Raises NotARunDirectory when the path holds no tracker run.
    """
    layout = discover(path)
    records, skipped = read_logs(layout, progress)
    every = tracker_runs(records)
    runs = [run for run in every if run.status != "deleted"] or every  # deleted ones where there is nothing else
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
