"""Experiment trackers' folders met on the walk (`run.discover`): an MLflow file-store run, a W&B run folder (or its
`files/` alone), a DVCLive folder; what is read through them is pruned from the walk, and W&B's own debug logs and
`latest-run` link are passed over.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from .json_hints import SNIFF_BYTES
from .run_layout import RunLayout

_WANDB_RUN_DIR = re.compile(r"^(offline-)?run-\d{8}_\d{6}-.+$|^latest-run$")


def wandb_link(dirpath: str, name: str) -> bool:
    """W&B's `latest-run` link (and the `latest-run.<pid>` links it leaves while switching it)
    points at a run folder that is read under its own name: not followed."""
    return name.startswith("latest-run") and os.path.islink(os.path.join(dirpath, name))


def note_tracker_folder(folder: Path, dirnames: list[str], filenames: list[str], layout: RunLayout) -> None:
    """An MLflow file-store run folder, a W&B run folder whose `.wandb` log is gone, or a DVCLive folder; prunes
    what is read through them (MLflow's metrics/params/tags, W&B's own debug logs, DVCLive's plots)."""
    if "meta.yaml" in filenames and ("metrics" in dirnames or "params" in dirnames):
        layout.mlflow_runs.append(folder)
        dirnames[:] = [d for d in dirnames if d not in ("metrics", "params", "tags")]
    elif _WANDB_RUN_DIR.match(folder.name) and "files" in dirnames:
        if not any(name.endswith(".wandb") for name in filenames):
            layout.wandb_folders.append(folder)
        dirnames[:] = [d for d in dirnames if d not in ("logs", "tmp")]
    elif "wandb-summary.json" in filenames and not _read_through_its_run_folder(folder, layout.root):
        # a W&B run's `files/` folder on its own (copied out of wandb/, or the folder given)
        layout.wandb_folders.append(folder)
    elif "plots" in dirnames and _is_dvclive_folder(folder, filenames):
        layout.dvclive_logs.append(folder)  # its metric files are read together, not as tables of their own
        dirnames[:] = [d for d in dirnames if d != "plots"]


def _is_dvclive_folder(folder: Path, filenames: list[str]) -> bool:
    """DVCLive's layout (dvclive live.py, plots/metric.py): `plots/metrics/` holding TSVs with its header
    (`step<TAB><name>`, older `timestamp<TAB>step<TAB><name>`), in a folder named `dvclive` (its default) or beside
    the `metrics.json` / `dvc.yaml` it writes there."""
    named = folder.name == "dvclive" or "metrics.json" in filenames or "dvc.yaml" in filenames
    first = next((folder / "plots" / "metrics").rglob("*.tsv"), None) if named else None
    return first is not None and _DVCLIVE_HEADER.match(_first_line(first)) is not None


_DVCLIVE_HEADER = re.compile(r"^(?:timestamp\t)?step\t[^\t]+$")


def _first_line(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.readline(SNIFF_BYTES).decode("utf-8-sig", errors="replace").rstrip("\r\n")
    except OSError:
        return ""


def _read_through_its_run_folder(folder: Path, root: Path) -> bool:
    """A run folder's `files/` below the folder analyzed: read through the run folder (its .wandb log or
    the files themselves), so not twice."""
    return folder != root and folder.name == "files" and bool(_WANDB_RUN_DIR.match(folder.parent.name))


def tracker_own_file(dirpath: str, name: str) -> bool:
    """W&B's debug logs in `wandb/`: its own diagnostics, never the training's output."""
    return name.startswith("debug") and name.endswith(".log") and os.path.basename(dirpath) == "wandb"
