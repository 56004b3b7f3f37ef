"""Reader of one run of MLflow's file store (`mlruns/<experiment_id>/<run_id>/`), without mlflow.

The layout (mlflow/store/tracking/file_store.py in github.com/mlflow/mlflow):

    mlruns/<experiment_id>/meta.yaml           the experiment: name, lifecycle_stage
    mlruns/<experiment_id>/<run_id>/meta.yaml  the run: run_id, run_name, status (1 RUNNING ... 5 KILLED),
                                               start_time, end_time, lifecycle_stage
    .../<run_id>/metrics/<key>                 one line per point: "<timestamp ms> <value> <step>"
                                               (older files: no step, which means 0; newer: two
                                               more fields naming a dataset); NaN and Inf as Python
                                               writes them ("nan", "inf"); a key with "/" is a sub-folder
    .../<run_id>/params/<key>                  the value as text
    .../<run_id>/tags/mlflow.runName           the run's name, in versions that kept it only there

`read(run_dir)` takes the run's folder (what `run.discover` lists) and returns its LogRecords; a
run deleted in MLflow (`lifecycle_stage: deleted`, kept on disk until `mlflow gc`) has status "deleted".
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UnreadableFile, os_reason
from ..timeline import LogRecords, TrackerRun
from ._filetime import file_mtime
from .flat_yaml import read_flat_yaml
from .mlflow_store import run_records, status_of

_MAX_PARAM_BYTES = 1 << 16  # MLflow caps a param at 6000 characters; anything far larger is not one


def read(run_dir: Path) -> LogRecords:
    """The metrics and params of one file-store run (see the module docstring).

    Raises UnreadableFile when its meta.yaml is not a run's.
    """
    run_dir = Path(run_dir)
    meta_yaml = run_dir / "meta.yaml"
    meta = read_flat_yaml(meta_yaml)
    if "run_id" not in meta and "run_uuid" not in meta:
        raise UnreadableFile(meta_yaml, "no run_id: not the meta.yaml of an MLflow run")
    rows, problems = _metric_rows(run_dir / "metrics")
    run = TrackerRun(kind="mlflow", store=str(run_dir.parent.parent),
                     run_id=str(meta.get("run_id") or meta["run_uuid"]),
                     name=str(meta.get("run_name") or _text(run_dir / "tags" / "mlflow.runName") or ""),
                     experiment=_experiment_name(run_dir.parent), status=_status(meta),
                     folder=str(run_dir))
    return run_records(rows, _params(run_dir / "params"), run, source=str(run_dir),
                       mtime=file_mtime(meta_yaml), warnings=tuple(problems))


def _status(meta: dict) -> str:
    return "deleted" if meta.get("lifecycle_stage") == "deleted" else status_of(meta.get("status"))


def _metric_rows(folder: Path) -> tuple[list[tuple[int, str, float, int]], list[str]]:
    rows: list[tuple[int, str, float, int]] = []
    problems: list[str] = []
    for path in _files_under(folder):
        key = path.relative_to(folder).as_posix()
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError as err:
            problems.append(f"metrics/{key}: {os_reason(err)}")
            continue
        lines, cut = _complete_lines(text)
        if cut:
            problems.append(f"metrics/{key}: the last line is cut (the run may still be writing); dropped")
        bad = 0
        for line in lines:
            parsed = _point(line)
            if parsed is None:
                bad += line.strip() != ""
                continue
            rows.append((parsed[0], key, parsed[1], parsed[2]))
        if bad:
            problems.append(f"metrics/{key}: {bad} lines are not '<timestamp> <value> <step>'; left out")
    return rows, problems


def _complete_lines(text: str) -> tuple[list[str], bool]:
    """The file's lines without a cut last one, and whether one was cut.

    MLflow appends each point with its newline in one write ("<timestamp> <value> <step>\n"), so a last
    line without its newline is a write in progress even where it parses ("... 0.5713 12" of step 125).
    """
    lines = text.splitlines()
    cut = bool(lines) and not text.endswith("\n") and lines[-1].strip() != ""
    return (lines[:-1], True) if cut else (lines, False)


def _point(line: str) -> tuple[int, float, int] | None:
    parts = line.split()
    if len(parts) < 2:
        return None
    try:
        return int(parts[0]), float(parts[1]), int(parts[2]) if len(parts) >= 3 else 0
    except ValueError:
        return None


def _params(folder: Path) -> dict[str, str]:
    params = {}
    for path in _files_under(folder):
        value = _text(path)
        if value is not None:
            params[path.relative_to(folder).as_posix()] = value
    return params


def _files_under(folder: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, _, filenames in os.walk(folder):
        found.extend(Path(dirpath) / name for name in filenames)
    return sorted(found)


def _text(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(_MAX_PARAM_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def _experiment_name(experiment_dir: Path) -> str:
    try:
        return str(read_flat_yaml(experiment_dir / "meta.yaml").get("name") or "")
    except (UnreadableFile, OSError):
        return ""
