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
belongs to that run. Runs deleted in MLflow are read only when named, or where the folder holds nothing else (with a
note saying so).
"""
from __future__ import annotations

import json
import os

from ..errors import NoSuchRun, SeveralRuns
from ..findings import Skipped, plural
from ..timeline import LogRecords, TrackerRun
from ..tracker_run import distinct_runs
from .wandb import CONFIG_TEXT

TRACKER_NAMES = {"wandb": "W&B", "mlflow": "MLflow"}


def choose_run(records: list[LogRecords], selector: str | None, where: str) -> tuple[list[LogRecords], list[Skipped]]:
    """The records of one analysis and a Skipped line per store whose runs were left out (see the module docstring).

    `where` names the folder analyzed, for the errors' messages.
    """
    runs = tracker_runs(records)
    if not runs:
        return records, []
    owner = {id(rec): _owner(rec, runs) for rec in records}
    last = None
    if selector is not None:
        chosen = [run for run in runs if run.matches(selector)]
        if not chosen:
            raise NoSuchRun(where, selector, [run_label(r) for r in runs])
    else:
        has_other_logs = any(owner[id(r)] is None and not r.frame.empty for r in records)
        last = None if has_other_logs else _last_attempt(runs, records, owner)
        chosen = [last] if last is not None else _default_runs(runs, has_other_logs=has_other_logs, where=where)
    keys = {run.key for run in chosen}
    kept = [rec for rec in records if owner[id(rec)] is None or owner[id(rec)] in keys]
    if selector is not None:  # the others were left out on purpose
        return kept, []
    if last is not None:
        return kept, _attempts_note(last, [r for r in runs if r.key not in keys and r.status != "deleted"])
    return kept, _deleted_notes(chosen) + _left_out_notes([r for r in runs if r.key not in keys
                                                           and r.status != "deleted"])


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
    live = [r for r in runs if r.status != "deleted"] or ([] if has_other_logs else runs)
    kinds = [r.kind for r in live]
    single = [r for r in live if kinds.count(r.kind) == 1]
    if len(single) == len(live) or has_other_logs or single:
        return single
    raise SeveralRuns(where, live, [run_label(r) for r in live])


# Config keys that name or save a run, not what it trains: attempts of one job may differ in them.
_BOOKKEEPING = frozenset({"output_dir", "run_name", "logging_dir", "save_total_limit", "save_steps", "save_strategy",
                          "overwrite_output_dir", "resume_from_checkpoint", "push_to_hub", "hub_model_id",
                          "hub_strategy", "hub_private_repo", "report_to"})


def _last_attempt(runs: list[TrackerRun], records: list[LogRecords], owner: dict) -> TrackerRun | None:
    """The run to analyze where a store's runs, and nothing else, are attempts of one job: one tracker's runs whose
    configs agree but for the keys that name or save them (`_BOOKKEEPING`; a sweep differs in what it trains), each
    begun after every earlier one ended (its last logged time; a run that logged no loss at all is a failed start),
    the last begun the only one that finished (the Trainer's closing `train_runtime`) and the one that logged the
    furthest step. None where any of that does not hold or the files do not say it."""
    live = [r for r in runs if r.status != "deleted"]
    if len(live) < 2 or len({r.kind for r in live}) != 1 or any(r.started <= 0 for r in live):
        return None
    facts = {}
    for run in live:
        mine = [rec for rec in records if owner[id(rec)] == run.key]
        configs = [json.loads(text) for rec in mine for name, text in rec.texts.items()
                   if name.startswith(CONFIG_TEXT + "/")]
        if len(configs) != 1 or not isinstance(configs[0], dict):
            return None
        losses = [rec.frame.loc[rec.frame["metric"] == "loss", "step"] for rec in mine if not rec.frame.empty]
        steps = max((float(s.max()) for s in losses if len(s)), default=-1.0)
        finished = any((rec.frame["metric"] == "train_runtime").any() for rec in mine if not rec.frame.empty)
        facts[run.key] = ({k: v for k, v in configs[0].items() if k not in _BOOKKEEPING}, steps, finished)
    live.sort(key=lambda r: r.started)
    last = live[-1]
    config, steps, finished = facts[last.key]
    if not finished:
        return None
    for run in live[:-1]:
        other_config, other_steps, other_finished = facts[run.key]
        if other_config != config or other_finished or other_steps >= steps:
            return None
        if not (0 < run.ended <= last.started or (run.ended <= 0 and other_steps < 0)):
            return None
    return last


def _attempts_note(last: TrackerRun, left_out: list[TrackerRun]) -> list[Skipped]:
    if not left_out:
        return []
    ids = ", ".join(run_label(r) for r in left_out[:5]) + (", ..." if len(left_out) > 5 else "")
    name = TRACKER_NAMES.get(last.kind, last.kind)
    return [Skipped(last.store, f"{plural(len(left_out), name + ' run')} not read ({ids}): earlier attempts of the "
                                f"same job (the same config but for its names and saving; each ended before the next "
                                f"began, none finished); the last, {run_label(last)}, which finished, was analyzed. "
                                "Name one with --run to read it")]


def _deleted_notes(chosen: list[TrackerRun]) -> list[Skipped]:
    """A note per run read though deleted in MLflow: where a folder holds nothing else, its deleted runs are what there
    is to read (chenmargalit_10X-ML-Engineer's one run, deleted by its owner, was 'nothing readable')."""
    return [Skipped(run.store, f"{TRACKER_NAMES.get(run.kind, run.kind)} run {run_label(run)} is marked deleted "
                               "(lifecycle_stage: deleted, kept on disk until `mlflow gc`): read, as the folder holds "
                               "no other run or log", note=True)
            for run in chosen if run.status == "deleted"]


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
