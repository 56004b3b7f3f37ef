"""A run of an experiment tracker (W&B, MLflow): what a log belongs to when a store holds several runs."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable


@dataclass(frozen=True)
class TrackerRun:
    """One run of an experiment tracker (W&B, MLflow) that a log belongs to, so one can be chosen
    when a store holds several.

    kind: "wandb" or "mlflow".
    store: the folder or file holding the tracker's runs: W&B's `wandb/` folder, MLflow's
        `mlruns/` folder or its SQLite file.
    run_id: the tracker's id of the run (W&B's 8-character id, MLflow's 32-hex run id).
    name: its display name ("" when it has none).
    experiment: the W&B project or the MLflow experiment's name ("" when unknown).
    status: "finished", "failed", "killed", "running", "unfinished" (the log has no end: still
        running, or the process died) or "deleted" (in MLflow, not yet garbage-collected), as the
        tracker's files say; "" when they do not say.
    folder: the run's own folder (W&B `run-<date>-<id>/`, MLflow `<experiment>/<run_id>/`); every
        file under it belongs to this run. "" for a run inside a SQLite file.
    started, ended: when the run began and when it last logged (Unix seconds; 0.0 where its files do not say): W&B's
        `_wandb.start_time` in config.yaml and the summary's `_timestamp`.
    """

    kind: str
    store: str
    run_id: str
    name: str = ""
    experiment: str = ""
    status: str = ""
    folder: str = ""
    started: float = 0.0
    ended: float = 0.0

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two logs the same run: a resumed W&B run writes a new folder under the same id."""
        return (self.kind, self.store, self.run_id)

    def matches(self, selector: str) -> bool:
        """Whether `--run SELECTOR` names this run: its id (or a unique start of it, 4+ characters) or its name."""
        return selector in (self.run_id, self.name) or (len(selector) >= 4 and self.run_id.startswith(selector))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "store": self.store, "run_id": self.run_id, "name": self.name,
                "experiment": self.experiment, "status": self.status, "folder": self.folder}


def distinct_runs(runs: Iterable[TrackerRun]) -> list[TrackerRun]:
    """The distinct runs, in the order first seen.

    A W&B run resumed into new folders (or copied to `latest-run/`) is one run: its folder is the
    first one seen, its name the first one given, its status that of the last one seen.
    """
    out: dict[tuple, TrackerRun] = {}
    for run in runs:
        seen = out.get(run.key)
        out[run.key] = run if seen is None else replace(seen, name=seen.name or run.name,
                                                        status=run.status or seen.status)
    return list(out.values())
