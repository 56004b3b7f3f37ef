"""The text of `forensics analyze STORE` for a W&B folder or MLflow store holding several runs: one line each."""
from __future__ import annotations

from ..analyzers import SUMMARY_KINDS
from .notation import plural
from .text import WIDTH

_TRACKERS = {"wandb": "W&B", "mlflow": "MLflow"}
_ID = 12  # characters of a run id shown: MLflow's are 32; --run takes any unique start of 4 or more


def store_text(store) -> str:
    """A head line, then per run: tracker, id, name, the tracker's status, and the verdict with its first incident."""
    runs = store.runs
    lines = [f"{plural(len(runs), 'run')} in {store.path}, each analyzed from its own logs "
             "(checkpoints not opened). For one run's full report: forensics analyze PATH --run ID", ""]
    id_width = min(max(len(v.run.run_id) for v in runs), _ID)
    names = [v.run.name if v.run.name != v.run.run_id else "" for v in runs]
    name_width = min(max(len(n) for n in names), 24)
    for verdict, name in zip(runs, names):
        run = verdict.run
        head = (f"{_TRACKERS.get(run.kind, run.kind):<6} {run.run_id[:_ID]:<{id_width}}  {name[:24]:<{name_width}}  "
                f"{run.status or '?':<10}  ")
        lines.append(_clip(head + _verdict(verdict)))
    unread = [s for s in store.skipped if not s.note]
    if unread:
        lines += ["", f"{plural(len(unread), 'file')} could not be read in full (--json lists them)"]
    if len(unread) < len(store.skipped):
        lines += [f"{plural(len(store.skipped) - len(unread), 'note')} on how the records were taken (--json lists "
                  "them)"]
    return "\n".join(lines) + "\n"


def _verdict(verdict) -> str:
    analysis = verdict.analysis
    if analysis is None:
        return f"-- {verdict.reason}"
    first = analysis.first_incident
    if first is None:
        return analysis.status.upper()
    if first.kind in SUMMARY_KINDS:
        return f"{analysis.status.upper()}: {first.message}"
    return f"{analysis.status.upper()}: step {first.step}: {first.message}"


def _clip(line: str) -> str:
    return line if len(line) <= WIDTH else line[:WIDTH - 1] + "…"
