"""The whole analysis of a run: discover -> ingest -> timeline -> checkpoints -> analyzers -> causes.

`analyze(path)` returns an `Analysis`, the one object the CLI renders (text, JSON, HTML) and a
notebook user holds. Its `to_dict()` is the `analyze --json` contract.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from ._version import __version__
from .analyzers import first_incident_of, status_of
from .analyzers.fall_measure import LearningEvidence
from .analyzers.learning_evidence import learning_shown
from .analyzers.weights import harm_step, safe_checkpoint
from .causes import infer_causes, roles
from .checkpoints.run_checks import check_run_checkpoints
from .checkpoints.types import CheckpointInfo, first_bad_of
from .checkpoints.updates import UpdateStep, checkpoint_updates
from .config import RunConfig, Thresholds
from .errors import NotARunDirectory
from .findings import Cause, Finding, Skipped, json_safe, plural
from .ingest import read_logs
from .ingest.run_config import read_run_config
from .ingest.trackers import choose_run
from .profile import RunProfile
from .rival_logs import one_run_timeline
from .discover.run import discover
from .run_findings import dated_by_optimizer_step, judge_run
from .discover.run_layout import RunLayout
from .timeline import Timeline

Progress = Callable[[str], None]


class CheckpointList(list):
    """`Analysis.checkpoints`: a plain list of CheckpointInfo, by step, that can also be a table.

    `.frame` is the DataFrame (one row per checkpoint: name, step, status, path, n_nonfinite_tensors,
    nonfinite_blocks, reason); a notebook shows that table (escaped) instead of the list.
    """

    @property
    def frame(self) -> pd.DataFrame:
        cols = ["name", "step", "status", "path", "n_nonfinite_tensors", "nonfinite_blocks", "reason"]
        rows = [{"name": c.name, "step": c.step, "status": c.status, "path": str(c.ref.path),
                 "n_nonfinite_tensors": len(c.nonfinite_tensors), "nonfinite_blocks": list(c.nonfinite_blocks),
                 "reason": c.reason} for c in self]
        return pd.DataFrame(rows, columns=cols)

    def _repr_html_(self) -> str:
        return self.frame.to_html(escape=True, index=False)  # names and reasons come from files: escaped

    def __repr__(self) -> str:
        """A line a checkpoint (CheckpointInfo.summary); the whole of each is still its item, the table `.frame`."""
        return "\n".join([f"<{plural(len(self), 'checkpoint')}>"] + [f"  {c.summary()}" for c in self])

    __str__ = __repr__


@dataclass(frozen=True)
class Analysis:
    """Everything forensics learned about one run.

    Fields:
        path: the run folder (or file) analyzed.
        status: "healthy", "warning" or "broken".
        findings: every finding, sorted by step.
        first_incident: the earliest finding that explains the rest, or None.
        timeline: the unified Timeline (long DataFrame in `.frame`, `.wide()` for step x metric).
        checkpoints: what the check of each checkpoint found, by step (a list of CheckpointInfo;
            `.frame` is the same as a DataFrame).
        config: the run's own configuration with provenance.
        causes: likely causes, most confident first.
        skipped: files that could not be read, and why.
        layout: the files found, by kind.
        updates: per block, how far the weights moved between consecutive checkpoints (UpdateStep).
        learning: what shows the run learned (the loss falling, a reward rising), or None where nothing does.
    """

    path: Path
    status: str
    findings: list[Finding]
    first_incident: Finding | None
    timeline: Timeline
    checkpoints: list[CheckpointInfo] = field(default_factory=list)
    config: RunConfig = field(default_factory=RunConfig)
    causes: list[Cause] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    layout: RunLayout | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    run_profile: RunProfile = field(default_factory=RunProfile)
    updates: tuple[UpdateStep, ...] = ()
    learning: LearningEvidence | None = None
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def __post_init__(self):
        if not isinstance(self.checkpoints, CheckpointList):  # frozen: set once, here, as the constructor would
            object.__setattr__(self, "checkpoints", CheckpointList(self.checkpoints))

    @property
    def last_good_checkpoint(self) -> CheckpointInfo | None:
        """The last checkpoint safe to resume from (a CheckpointInfo), or None: finite, and saved before the
        first incident that harms the weights (non-finite gradients, divergence onset, collapse), not merely
        finite. A finite checkpoint saved later carries `after_incident_step` in the JSON.

        >>> import forensics
        >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
        >>> a = analyze(run)
        >>> a.last_good_checkpoint.name, a.first_bad_checkpoint.name
        ('checkpoint-20', 'checkpoint-40')
        """
        return safe_checkpoint(self.checkpoints, self.findings)

    @property
    def incident_step(self) -> int | None:
        """The step of the first incident that harms the weights (checkpoints from then on are not safe)."""
        return harm_step(self.findings)

    @property
    def first_bad_checkpoint(self) -> CheckpointInfo | None:
        """The earliest checkpoint holding NaN/Inf weights (a CheckpointInfo), or None."""
        return first_bad_of(self.checkpoints)

    def findings_frame(self) -> pd.DataFrame:
        """A DataFrame, one row per finding: kind, severity, step, end_step, metric, message, abandoned, caused_by.

        `caused_by` ("<kind>@<step>") links a finding to the earlier one it followed from.

        >>> import forensics
        >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
        >>> a = analyze(run)
        >>> f = a.findings_frame()
        >>> f[["kind", "step", "metric"]].values.tolist()[:2]
        [['masked_nan_loss', 35, 'loss'], ['nonfinite_metric', 35, 'grad_norm']]
        >>> f.loc[f["kind"] == "masked_nan_loss", "caused_by"].tolist()
        ['nonfinite_metric@35']
        """
        cols = ["kind", "severity", "step", "end_step", "metric", "message", "abandoned", "caused_by"]
        # Columns that may hold None stay object, so None stays None (a string column makes it NaN).
        dtypes = {"step": "int64", "abandoned": "bool"}
        return pd.DataFrame({c: pd.Series([getattr(f, c) for f in self.findings], dtype=dtypes.get(c, object))
                             for c in cols})

    @property
    def checkpoints_frame(self) -> pd.DataFrame:
        """A DataFrame, one row per checkpoint: name, step, status, path, n_nonfinite_tensors,
        nonfinite_blocks, reason (the same as `checkpoints.frame`).

        >>> import forensics
        >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
        >>> a = analyze(run)
        >>> a.checkpoints_frame[["name", "status", "nonfinite_blocks"]].values.tolist()
        [['checkpoint-20', 'ok', []], ['checkpoint-40', 'nonfinite', ['model.layers.1']], \
['checkpoint-60', 'nonfinite', ['model.layers.1']]]
        """
        return self.checkpoints.frame

    def plot(self):
        """The report's main figure (loss, grad_norm, learning rate, findings marked) as a matplotlib Figure.

        The Figure is built without pyplot, so nothing global changes; a notebook shows it when it is
        the cell's value, `fig.savefig("run.png")` writes it.

        >>> import forensics
        >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
        >>> a = analyze(run)
        >>> fig = a.plot()
        >>> type(fig).__module__, len(fig.axes) > 0
        ('matplotlib.figure', True)
        """
        from .report import main_figure  # matplotlib: imported only when a figure is asked for

        return main_figure(self)

    def _repr_html_(self) -> str:
        from .report import summary_html

        return summary_html(self)

    def __repr__(self) -> str:
        first = self.first_incident
        what = f", first incident {first.kind} at step {first.step}" if first else ""
        return (f"<Analysis {self.status}: {len(self.findings)} findings{what}, "
                f"{len(self.checkpoints)} checkpoints, {len(self.skipped)} skipped>")

    def _checkpoint_dict(self, checkpoint: CheckpointInfo) -> dict[str, Any]:
        """A checkpoint's JSON, with `after_incident_step`: the incident it was saved after (finite, but not safe)."""
        incident = self.incident_step
        after = checkpoint.status == "ok" and incident is not None and (checkpoint.step is None
                                                                        or checkpoint.step >= incident)
        return {**checkpoint.to_dict(), "after_incident_step": incident if after else None}

    @property
    def leading_cause(self) -> Cause | None:
        """The cause to act on first (`causes.roles.leading_cause`): `causes` is ordered by confidence, and the
        likeliest may be HF's NaN filter, which hid the trouble rather than caused it."""
        return roles.leading_cause(self.causes, self.first_incident)

    def _causes_dicts(self) -> list[dict[str, Any]]:
        """The causes, ordered by confidence, each with its `role` in the report (see causes.roles.cause_role)."""
        lead = self.leading_cause
        return [{**c.to_dict(), "role": roles.cause_role(self.first_incident, c, lead)} for c in self.causes]

    def to_dict(self) -> dict[str, Any]:
        """The `analyze --json` contract (fields may be added, never renamed or dropped)."""
        last_good, first_bad = self.last_good_checkpoint, self.first_bad_checkpoint
        return {
            "status": self.status,
            "first_incident": self.first_incident.to_dict() if self.first_incident else None,
            "findings": [f.to_dict() for f in self.findings],
            "segments": [s.to_dict() for s in self.timeline.segments],
            "skipped": [s.to_dict() for s in self.skipped],
            "checkpoints": [self._checkpoint_dict(c) for c in self.checkpoints],
            "last_good_checkpoint": last_good.to_dict() if last_good else None,
            "first_bad_checkpoint": first_bad.to_dict() if first_bad else None,
            "causes": self._causes_dicts(),
            "leading_cause": lead.cause if (lead := self.leading_cause) is not None else None,
            "run_profile": self.run_profile.to_dict(),
            "updates": [u.to_dict() for u in self.updates],
            "learning_evidence": json_safe(self.learning.to_dict()) if self.learning else None,
            "tracker_runs": [run.to_dict() for run in self.timeline.tracker_runs],
            "config_missing": list(self.config.missing),
            "config_conflicts": json_safe({key: [{"value": v.value, "source": v.source} for v in seen]
                                           for key, seen in self.config.conflicts().items()}),
            "path": str(self.path),
            "version": __version__,
            "created": self.created,
        }


def load_timeline(path, progress: Progress | None = None, run: str | None = None) -> Timeline:
    """Read every training log under `path` into one Timeline, without touching checkpoints.

    `run` picks one W&B / MLflow run where the folder holds several (its id or name); see
    `forensics.ingest.trackers` (SeveralRuns is raised when several are there and none is named).

    Returns a Timeline (`.frame` long: step, metric, value, source, ...; `.wide()` step x metric);
    files that could not be read are in its `.skipped`. Faster than `analyze` on a big run.

    >>> import json, tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> history = [{"step": 10, "loss": 2.5, "learning_rate": 1e-5}, {"step": 20, "loss": 2.25, "learning_rate": 1e-5}]
    >>> _ = (run / "trainer_state.json").write_text(json.dumps({"global_step": 20, "log_history": history}))
    >>> t = load_timeline(run)
    >>> t.metrics, t.series("loss").tolist()
    (['learning_rate', 'loss'], [2.5, 2.25])
    """
    layout = discover(path)
    records, skipped = read_logs(layout, progress)
    records, left_out = choose_run(records, run, str(path))
    timeline, other_runs = one_run_timeline(records)
    timeline.skipped = layout.skipped + skipped + left_out + other_runs
    return timeline


def analyze(path, thresholds: Thresholds | None = None, check_checkpoints: bool = True,
            workers: int | None = None, progress: Progress | None = None, run: str | None = None) -> Analysis:
    """Analyze the run at `path` (a run folder or one log file) and return an Analysis.

    Args:
        path: the run's output folder (trainer_state.json, runs/, checkpoint-*/ ...) or one log file.
        thresholds: detector thresholds (default Thresholds()).
        check_checkpoints: False skips reading weight files (logs only).
        workers: processes per checkpoint check (default: os.cpu_count()).
        progress: called with a short line as files are read.
        run: the W&B / MLflow run to analyze (its id, the start of it, or its name) where the folder
            holds several; SeveralRuns is raised when it holds several and `run` is None
            (`forensics.store.analyze_each` analyzes each).

    Returns an Analysis: `status`, `first_incident`, `findings` (and `findings_frame()`), `timeline`,
    `checkpoints` (and `.frame`), `config`, `causes`, `skipped`. Raises NotARunDirectory when nothing
    under `path` can be read. Example, a run whose loss HF logged as 0.0 while grad_norm was NaN:

    >>> import json, tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> history = [{"step": s, "loss": 2.0 - s / 100, "grad_norm": 1.0} for s in (10, 20, 30)]
    >>> history += [{"step": s, "loss": 0.0, "grad_norm": float("nan")} for s in (40, 50, 60)]
    >>> _ = (run / "trainer_state.json").write_text(json.dumps({"global_step": 60, "log_history": history}))
    >>> a = analyze(run)
    >>> a.status, a.first_incident.kind, a.first_incident.step
    ('broken', 'nonfinite_metric', 40)
    >>> a.findings_frame()[["kind", "step", "metric"]].values.tolist()
    [['masked_nan_loss', 40, 'loss'], ['nonfinite_metric', 40, 'grad_norm']]
    """
    layout = discover(path)
    if layout.is_empty():
        raise _nothing_found(path, layout)
    records, skipped = read_logs(layout, progress)
    records, left_out = choose_run(records, run, str(path))
    return analyze_records(path, layout, records, layout.skipped + skipped + left_out, thresholds,
                           check_checkpoints, workers, progress)


def _nothing_found(path, layout: RunLayout) -> NotARunDirectory:
    """The error for a folder where no log or weight file was found: the files that were skipped are named (a cut
    notebook, a pipe), else the plain 'no training logs or checkpoints found'."""
    if layout.skipped:
        return NotARunDirectory(path, f"nothing readable ({'; '.join(str(s) for s in layout.skipped)})")
    return NotARunDirectory(path)


def analyze_records(path, layout: RunLayout, records: list, skipped: list[Skipped],
                    thresholds: Thresholds | None = None, check_checkpoints: bool = True, workers: int | None = None,
                    progress: Progress | None = None) -> Analysis:
    """The analysis of logs already read (`records`, LogRecords of the layout's files) and the layout's checkpoints."""
    thresholds = thresholds or Thresholds()
    timeline, other_runs = one_run_timeline(records)  # two runs' logs in one folder: one run's, and a note
    skipped = skipped + other_runs
    timeline.skipped = skipped
    checkpoints: list[CheckpointInfo] = []
    updates: list[UpdateStep] = []
    if check_checkpoints and layout.weight_files:
        checkpoints, updates, not_read = _checked_checkpoints(path, layout, thresholds, workers, progress)
        skipped = skipped + not_read
    read_any = any(c.status != "unreadable" for c in checkpoints)  # a blob.bin refused by the loader is no weight read
    if timeline.frame.empty and not read_any and not records:  # files found, but not one log or weight read
        reasons = "; ".join(str(s) for s in skipped) or "no training metric or checkpoint weight in the files found"
        raise NotARunDirectory(path, f"nothing readable ({reasons})")
    config = read_run_config(layout, timeline)
    named = {s.path for s in skipped}
    skipped = skipped + [s for s in config.unreadable_files if s.path not in named]
    findings, metrics, profile = judge_run(layout, timeline, config, checkpoints, updates, thresholds)
    causes = infer_causes(config, timeline, findings, checkpoints, thresholds, profile)
    findings = dated_by_optimizer_step(findings, metrics)
    return Analysis(
        path=Path(path), status=status_of(findings), findings=findings,
        first_incident=first_incident_of(findings), timeline=timeline, checkpoints=checkpoints,
        config=config, causes=causes, skipped=skipped, layout=layout, thresholds=thresholds, run_profile=profile,
        updates=tuple(updates), learning=learning_shown(metrics, thresholds),
    )


def _checked_checkpoints(path, layout: RunLayout, thresholds: Thresholds, workers: int | None,
                         progress: Progress | None) -> tuple[list[CheckpointInfo], list[UpdateStep], list[Skipped]]:
    """(each checkpoint checked, how far the weights moved between consecutive ones, the files and pairs not read)."""
    checkpoints, ck_skipped = check_run_checkpoints(layout, thresholds, workers=workers, progress=progress)
    updates, not_compared = checkpoint_updates(checkpoints, workers=workers, progress=progress,
                                               budget=thresholds.updates_read_budget)
    return checkpoints, updates, ck_skipped + [Skipped(str(path), problem) for problem in not_compared]
