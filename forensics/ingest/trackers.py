"""Which experiment-tracker run to analyze, when a folder holds W&B or MLflow runs.

A W&B folder (`wandb/`) and an MLflow store (`mlruns/`, `mlflow.db`) often hold many runs; a
job's output folder holds its own logs and, when the HF Trainer reported to W&B and MLflow, one
run of each (one job seen by several trackers, merged like trainer_state.json and TensorBoard).

`choose_run(records, selector)` keeps the logs of one analysis:

* `--run SELECTOR` (a run id, the first 4+ characters of one, or a run name): the runs it names
  (every tracker's, so HF's `run_name`, which W&B and MLflow both take, picks the job in both),
  and the folder's other logs. Naming no run raises NoSuchRun, listing the runs there are.
* no selector: the run of each tracker that has one run, with the other logs; a tracker with
  several runs is left out when anything else is read (trainer_state.json, TensorBoard, another
  tracker's one run), and its runs are named in one `Skipped` line per store.
* no selector, several runs, nothing else: SeveralRuns, listing them (the CLI then gives one
  verdict line per run, see `forensics.store`).

A log that is no tracker's own but lies inside a run's folder (W&B's `files/output.log`)
belongs to that run. Runs deleted in MLflow are read only when named.
"""
from __future__ import annotations

import os
from ..errors import NoSuchRun, SeveralRuns
from ..findings import Skipped, plural
from ..timeline import LogRecords, TrackerRun
from ..tracker_run import distinct_runs

TRACKER_NAMES = {"wandb": "W&B", "mlflow": "MLflow"}


def choose_run(records: list[LogRecords], selector: str | None, where: str) -> tuple[list[LogRecords], list[Skipped]]:
    """The records of one analysis and a Skipped line per store whose runs were left out (see the module docstring).

    `where` names the folder analyzed, for the errors' messages.
    """
    runs = tracker_runs(records)
    if not runs:
        return records, []
    owner = {id(rec): _owner(rec, runs) for rec in records}
    if selector is not None:
        chosen = [run for run in runs if run.matches(selector)]
        if not chosen:
            raise NoSuchRun(where, selector, [run_label(r) for r in runs])
    else:
        chosen = _default_runs(runs, has_other_logs=any(owner[id(r)] is None and not r.frame.empty for r in records),
                               where=where)
    keys = {run.key for run in chosen}
    kept = [rec for rec in records if owner[id(rec)] is None or owner[id(rec)] in keys]
    if selector is not None:  # the others were left out on purpose
        return kept, []
    return kept, _left_out_notes([r for r in runs if r.key not in keys and r.status != "deleted"])


def _owner(rec: LogRecords, runs: list[TrackerRun]) -> tuple | None:
    if rec.tracker_run is not None:
        return rec.tracker_run.key
    for run in runs:
        if run.folder and _inside(rec.source, run.folder):
            return run.key
    return None


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.abspath(path), os.path.abspath(folder)]) == os.path.abspath(folder)


def _default_runs(runs: list[TrackerRun], has_other_logs: bool, where: str) -> list[TrackerRun]:
    """A tracker with one run: that run. One with several: left out when anything else is read, else SeveralRuns."""
    live = [r for r in runs if r.status != "deleted"]
    kinds = [r.kind for r in live]
    single = [r for r in live if kinds.count(r.kind) == 1]
    if len(single) == len(live) or has_other_logs or single:
        return single
    raise SeveralRuns(where, live, [run_label(r) for r in live])


def _left_out_notes(left_out: list[TrackerRun]) -> list[Skipped]:
    by_store: dict[str, list[TrackerRun]] = {}
    for run in left_out:
        by_store.setdefault(run.store, []).append(run)
    return [Skipped(store, f"{plural(len(group), TRACKER_NAMES.get(group[0].kind, group[0].kind) + ' run')} not read "
                           f"({', '.join(run_label(r) for r in group[:5])}{', ...' if len(group) > 5 else ''}): "
                           "the folder's other logs were analyzed; name one with --run to read it too")
            for store, group in by_store.items()]


def run_label(run: TrackerRun) -> str:
    """`<id>` or `<id> '<name>'`, as the run is named in lists and messages."""
    return f"{run.run_id} {run.name!r}" if run.name and run.name != run.run_id else run.run_id


def records_of(records: list[LogRecords], run: TrackerRun) -> list[LogRecords]:
    """The records of one tracker run alone: its own logs and the files inside its folder."""
    runs = tracker_runs(records)
    return [rec for rec in records if _owner(rec, runs) == run.key]


def tracker_runs(records: list[LogRecords]) -> list[TrackerRun]:
    """The distinct tracker runs the records belong to, in the order read."""
    return distinct_runs(rec.tracker_run for rec in records if rec.tracker_run is not None)
