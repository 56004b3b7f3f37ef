"""Runs that the real HF Trainer reports to the real W&B (offline) and MLflow (file store, SQLite).

`make_tracker_run(folder, spec, trackers, mlflow_store)` trains `spec` (support.runmaker) into
`folder/output/` with `report_to` naming the trackers, and leaves their files where a user's job
would: W&B's `folder/wandb/offline-run-*/` (WANDB_MODE=offline: nothing leaves the machine) and
MLflow's `folder/mlruns/` or `folder/mlflow.db`. Every number in them went through HF's
WandbCallback / MLflowCallback and the trackers' own writers. The RunFacts it returns carry the
trainer's in-memory `log_history`, which tests compare the tracker files against.

`log_extreme_values(folder, mlflow_store)` adds an MLflow run (to the store in `folder`, new or not),
logged with mlflow's own API, holding +Inf, -Inf, NaN and the largest double (the SQL store
writes Inf as the largest double).

    PYTHONPATH=tests python -c "from support.trackers import *; make_tracker_run('/tmp/t', NAN_SPEC, ('wandb',), None)"
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path

from .runmaker import NanInjection, RunFacts, RunSpec, make_run

# 40 steps, a log every 5 and a checkpoint every 10 (like the fixture runs); seeds of their own.
HEALTHY_SPEC = RunSpec(max_steps=40, logging_steps=5, save_steps=10, seed=121)
# the last block NaN before step 21: grad_norm NaN (and loss logged 0.0 by HF's filter) from step 25
NAN_SPEC = replace(HEALTHY_SPEC, seed=122, incidents=(NanInjection(step=21),))

EXTREME_VALUES = (("loss", float("inf"), 1), ("loss", float("-inf"), 2), ("loss", float("nan"), 3),
                  ("loss", 1.7976931348623157e308, 4), ("loss", 2.5, 5))


def mlflow_uri(folder: Path, mlflow_store: str) -> str:
    """The tracking URI of the store kind ("file": folder/mlruns, "sqlite": folder/mlflow.db)."""
    folder = Path(folder).resolve()
    return (folder / "mlruns").as_uri() if mlflow_store == "file" else f"sqlite:///{folder / 'mlflow.db'}"


def make_tracker_run(folder: str | Path, spec: RunSpec, trackers: tuple[str, ...],
                     mlflow_store: str | None = None) -> RunFacts:
    """Train `spec` into folder/output reporting to `trackers` ("wandb", "mlflow", "tensorboard")."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = {"WANDB_MODE": "offline", "WANDB_DIR": str(folder), "WANDB_SILENT": "true", "WANDB_PROJECT": "forensics-tests",
           "WANDB_DISABLE_GIT": "true", "WANDB_CONSOLE": "off"}
    if "mlflow" in trackers:
        env.update({"MLFLOW_TRACKING_URI": mlflow_uri(folder, mlflow_store or "file"),
                    "MLFLOW_ALLOW_FILE_STORE": "true"})  # mlflow 3 asks before it writes its older file store
    with _environment(env):
        if "mlflow" in trackers:
            import mlflow

            # HF's MLflowCallback reads MLFLOW_TRACKING_URI only while no URI is set in the process (a fresh
            # process, as a training script is); a second run in this one would log to the first one's store.
            mlflow.set_tracking_uri(env["MLFLOW_TRACKING_URI"])
        try:
            return make_run(folder / "output", replace(spec, report_to=tuple(trackers)))
        finally:
            _finish_wandb(trackers)


def log_extreme_values(folder: str | Path, mlflow_store: str) -> str:
    """One more MLflow run (name "extreme-values") with EXTREME_VALUES logged by mlflow itself; its run id."""
    import mlflow

    with _environment({"MLFLOW_ALLOW_FILE_STORE": "true"}):
        mlflow.set_tracking_uri(mlflow_uri(Path(folder), mlflow_store))
        with mlflow.start_run(run_name="extreme-values") as run:
            for key, value, step in EXTREME_VALUES:
                mlflow.log_metric(key, value, step=step)
            return run.info.run_id


def _finish_wandb(trackers: tuple[str, ...]) -> None:
    """A script ends with wandb.finish() (or exits, which does it): the run log is complete only then.
    teardown() also forgets the settings wandb read from the environment (WANDB_DIR) at its first run."""
    if "wandb" in trackers:
        import wandb

        if wandb.run is not None:
            wandb.finish()
        wandb.teardown()


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
