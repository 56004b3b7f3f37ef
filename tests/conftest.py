"""Shared pytest fixtures: runs trained by the real transformers.Trainer.

Each `*_run` fixture trains its run once per test session (on first use) into a tmp_path_factory folder
and returns `(path, facts)`: the run folder and the `support.runmaker.RunFacts` saying how it was made. Seeds
differ from the shipped sample_runs/ (seed 0), so tools are tested on runs they have never seen.
Treat the folders as read-only: other tests share them. Fixtures skip when transformers is missing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from support.fixture_runs import FIXTURE_SPECS
from support.runmaker import RunFacts, make_run

# The real-run corpus is data: a run folder may hold a Python file of its own (XTuner's vis_data/config.py), which
# --doctest-modules would import. Never collect from it.
collect_ignore = ["realworld", "trackers_realworld"]


def _build(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, RunFacts]:
    pytest.importorskip("transformers")
    if FIXTURE_SPECS[name].lora:
        pytest.importorskip("peft")
    path = tmp_path_factory.mktemp("runs") / name
    return path, make_run(path, FIXTURE_SPECS[name])


def _run_fixture(name: str):
    """A session fixture `<name>_run` returning (path, facts) of the run FIXTURE_SPECS[name] describes."""
    @pytest.fixture(scope="session", name=f"{name}_run")
    def built(tmp_path_factory):
        return _build(tmp_path_factory, name)

    return built


# healthy_run, nan_run, spike_run, lr_blowup_run, collapse_run, resumed_run, bf16_run, gpt2_run, lora_run
for _name in FIXTURE_SPECS:
    globals()[f"{_name}_run"] = _run_fixture(_name)


# Runs the real Trainer reported to W&B (offline) and MLflow (support/trackers.py): (folder, facts), the
# Trainer's output in folder/output, the trackers' files beside it.
def _tracker_fixture(name: str, spec_name: str, trackers: tuple[str, ...], mlflow_store: str | None,
                     extreme_values: bool = False):
    @pytest.fixture(scope="session", name=name)
    def built(tmp_path_factory):
        pytest.importorskip("transformers")
        for package in {"wandb": "wandb", "mlflow": "mlflow"}.keys() & set(trackers):
            pytest.importorskip(package)
        from support import trackers as tr

        folder = tmp_path_factory.mktemp("trackers") / name
        facts = tr.make_tracker_run(folder, getattr(tr, spec_name), trackers, mlflow_store)
        if extreme_values:
            tr.log_extreme_values(folder, mlflow_store)
        return folder, facts

    return built


# NaN from step 21 (grad_norm NaN, loss logged 0.0 from 25): TensorBoard, W&B and an MLflow file store
tracker_nan_run = _tracker_fixture("tracker_nan_run", "NAN_SPEC", ("tensorboard", "wandb", "mlflow"), "file")
# the same run, to an MLflow SQLite store that also holds a second run ("extreme-values": Inf, -Inf, NaN)
tracker_nan_sqlite_run = _tracker_fixture("tracker_nan_sqlite_run", "NAN_SPEC", ("mlflow",), "sqlite",
                                          extreme_values=True)
# nothing injected: W&B and an MLflow SQLite store
tracker_healthy_run = _tracker_fixture("tracker_healthy_run", "HEALTHY_SPEC", ("wandb", "mlflow"), "sqlite")
