"""MLflow stores read without mlflow: the file store (`mlruns/`) and the SQL store in SQLite (`mlflow.db`).

The stores are written by the real mlflow package, through the real Trainer's MLflowCallback
(support/trackers.py); expected values come from the Trainer's own log_history and from the values
the tests log with mlflow's API.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from forensics.analysis import analyze, load_timeline
from forensics.errors import NoSuchRun, SeveralRuns
from forensics.ingest import mlflow_files, mlflow_sqlite
from forensics.discover.run import discover

pytestmark = pytest.mark.slow


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _hf_run_name(db: Path) -> str:
    (run,) = [r.tracker_run for r in mlflow_sqlite.read_all(db) if r.tracker_run.name != "extreme-values"]
    return run.name


def _check_every_point(timeline, facts) -> None:
    wide = timeline.wide()
    entries = [e for e in facts.log_history if "loss" in e]
    assert [s for s in wide.index] == [e["step"] for e in entries]
    for entry in entries:
        for key in ("loss", "grad_norm", "learning_rate", "epoch"):
            assert _same(wide.loc[entry["step"], key], entry[key]), (entry["step"], key)
    summary = facts.log_history[-1]  # HF's closing entry: train_loss, train_runtime, ... at the last step
    assert wide.loc[summary["step"], "train_loss"] == summary["train_loss"]


def _same_verdict(alone, own) -> None:
    assert alone.status == own.status
    assert [(f.kind, f.step, f.metric, f.caused_by) for f in alone.findings] == [
        (f.kind, f.step, f.metric, f.caused_by) for f in own.findings]
    assert [c.cause for c in alone.causes] == [c.cause for c in own.causes]


# --- the file store ------------------------------------------------------------------------------

def test_every_point_the_trainer_logged_is_in_the_file_store_timeline(tracker_nan_run):
    folder, facts = tracker_nan_run
    _check_every_point(load_timeline(folder / "mlruns"), facts)


def test_the_file_store_alone_gives_the_verdict_of_the_trainers_own_output(tracker_nan_run):
    folder, facts = tracker_nan_run
    alone = analyze(folder / "mlruns")
    _same_verdict(alone, analyze(folder / "output", check_checkpoints=False))
    assert (alone.first_incident.kind, alone.first_incident.step) == ("nonfinite_metric", facts.first_nonfinite_step)
    (run,) = alone.timeline.tracker_runs
    assert (run.kind, run.status, run.experiment) == ("mlflow", "finished", "Default")


def test_the_params_are_the_runs_configuration_typed_back_from_text(tracker_nan_run):
    folder, facts = tracker_nan_run
    config = analyze(folder / "mlruns").config
    for key in ("learning_rate", "max_grad_norm", "warmup_steps", "weight_decay", "fp16", "bf16", "lr_scheduler_type",
                "per_device_train_batch_size"):
        assert config.get(key) == facts.training_args[key], key
        assert config.source_of(key).endswith("(MLflow params)")
    assert config.get("report_to") == ["tensorboard", "wandb", "mlflow"]
    assert config.get("model.num_hidden_layers") == facts.spec["num_layers"]


def test_three_trackers_of_one_job_are_one_timeline_without_a_disagreement(tracker_nan_run):
    folder, facts = tracker_nan_run
    result = analyze(folder, check_checkpoints=False)
    layout = result.layout
    assert layout.trainer_states and layout.tensorboard and layout.wandb_logs and layout.mlflow_runs
    assert [r.kind for r in result.timeline.tracker_runs] == ["wandb", "mlflow"]
    # the same value seen in several files is one point (kept from the most precise: trainer_state.json)
    assert not result.timeline.frame.duplicated(["step", "metric"]).any()
    assert len(result.timeline.series("loss")) == len([e for e in facts.log_history if "loss" in e])
    assert "source_disagreement" not in [f.kind for f in result.findings]
    assert (result.first_incident.kind, result.first_incident.step) == ("nonfinite_metric", facts.first_nonfinite_step)


def test_file_store_points_keep_inf_nan_and_the_largest_double(tmp_path):
    from support.trackers import EXTREME_VALUES, log_extreme_values

    run_id = log_extreme_values(tmp_path, "file")
    (run_dir,) = discover(tmp_path).mlflow_runs
    assert run_dir.name == run_id
    rec = mlflow_files.read(run_dir)
    assert rec.frame["step"].tolist() == [step for _, _, step in EXTREME_VALUES]
    assert all(_same(got, value) for got, (_, value, _) in zip(rec.frame["value"], EXTREME_VALUES))
    assert rec.tracker_run.name == "extreme-values"


def test_a_run_still_running_and_a_deleted_run_say_so(tmp_path):
    import mlflow

    from support.trackers import _environment, mlflow_uri

    with _environment({"MLFLOW_ALLOW_FILE_STORE": "true"}):
        mlflow.set_tracking_uri(mlflow_uri(tmp_path, "file"))
        with mlflow.start_run(run_name="gone") as gone:
            mlflow.log_metric("loss", 1.0, step=1)
        mlflow.delete_run(gone.info.run_id)
        live = mlflow.start_run(run_name="live")
        mlflow.log_metric("loss", 2.0, step=1)
        mlflow.log_metric("loss", 1.5, step=2)
        try:
            status = {r.tracker_run.name: r.tracker_run.status for r in map(mlflow_files.read, discover(tmp_path).mlflow_runs)}
            assert status == {"gone": "deleted", "live": "running"}
            result = analyze(tmp_path)  # the deleted run is not read unless named
            assert [r.name for r in result.timeline.tracker_runs] == ["live"]
            assert [r.name for r in analyze(tmp_path, run="gone").timeline.tracker_runs] == ["gone"]
        finally:
            mlflow.end_run()
            assert live.info.run_id


# --- the SQLite store ----------------------------------------------------------------------------

def test_every_point_the_trainer_logged_is_in_the_sqlite_timeline(tracker_nan_sqlite_run):
    folder, facts = tracker_nan_sqlite_run
    db = folder / "mlflow.db"
    _check_every_point(load_timeline(db, run=_hf_run_name(db)), facts)


def test_the_sqlite_store_alone_gives_the_verdict_of_the_trainers_own_output(tracker_nan_sqlite_run):
    folder, facts = tracker_nan_sqlite_run
    db = folder / "mlflow.db"
    with pytest.raises(SeveralRuns, match="2 tracker runs"):
        analyze(db)
    alone = analyze(db, run=_hf_run_name(db))
    _same_verdict(alone, analyze(folder / "output", check_checkpoints=False))
    assert alone.config.get("learning_rate") == facts.training_args["learning_rate"]


def test_sqlite_nan_and_inf_are_read_as_logged(tracker_nan_sqlite_run):
    from support.trackers import EXTREME_VALUES

    folder, _ = tracker_nan_sqlite_run
    (rec,) = [r for r in mlflow_sqlite.read_all(folder / "mlflow.db") if r.tracker_run.name == "extreme-values"]
    values = dict(zip(rec.frame["step"], rec.frame["value"]))
    assert values[1] == math.inf and values[2] == -math.inf and math.isnan(values[3]) and values[5] == 2.5
    assert values[4] == math.inf  # the store cannot tell the largest double from Inf: it writes Inf as that
    assert len(values) == len(EXTREME_VALUES)


def test_the_sqlite_store_is_opened_read_only(tracker_nan_sqlite_run):
    folder, _ = tracker_nan_sqlite_run
    db = folder / "mlflow.db"
    before = (db.read_bytes(), os.stat(db).st_mtime_ns, sorted(p.name for p in folder.iterdir()))
    analyze(db, run="extreme-values")
    assert (db.read_bytes(), os.stat(db).st_mtime_ns, sorted(p.name for p in folder.iterdir())) == before


def test_another_programs_sqlite_file_is_not_a_store(tmp_path):
    import sqlite3

    with sqlite3.connect(tmp_path / "optuna.db") as db:
        db.execute("CREATE TABLE trials (id INTEGER)")
    db.close()
    assert discover(tmp_path).mlflow_dbs == [(tmp_path / "optuna.db").resolve()]
    assert mlflow_sqlite.read_all(tmp_path / "optuna.db") == []


# --- the command line on a store with several runs -----------------------------------------------

def test_analyze_a_store_of_several_runs_gives_one_verdict_line_each(tracker_nan_sqlite_run):
    from click.testing import CliRunner

    from forensics.cli import cli

    folder, facts = tracker_nan_sqlite_run
    db = str(folder / "mlflow.db")
    result = CliRunner().invoke(cli, ["analyze", db])
    assert result.exit_code == 1, result.output  # one of the runs is broken
    lines = [line for line in result.output.splitlines() if line.startswith("MLflow")]
    assert len(lines) == 2
    hf_line = next(line for line in lines if _hf_run_name(Path(db)) in line)
    assert f"BROKEN: step {facts.first_nonfinite_step}: grad_norm is NaN" in hf_line
    run_id = hf_line.split()[1]  # the start of the id shown is enough for --run
    assert CliRunner().invoke(cli, ["analyze", db, "--run", run_id]).exit_code == 1
    data = json.loads(CliRunner().invoke(cli, ["analyze", db, "--json"]).output)
    assert data["status"] == "broken" and len(data["runs"]) == 2
    by_name = {r["run"]["name"]: r for r in data["runs"]}
    assert by_name[_hf_run_name(Path(db))]["analysis"]["first_incident"]["step"] == facts.first_nonfinite_step
    assert by_name["extreme-values"]["analysis"]["first_incident"]["kind"] == "nonfinite_metric"


def test_run_names_one_run_and_a_wrong_name_lists_the_runs(tracker_nan_sqlite_run):
    from click.testing import CliRunner

    from forensics.cli import cli

    folder, facts = tracker_nan_sqlite_run
    db = str(folder / "mlflow.db")
    data = json.loads(CliRunner().invoke(cli, ["analyze", db, "--run", _hf_run_name(Path(db)), "--json"]).output)
    assert data["first_incident"]["step"] == facts.first_nonfinite_step
    assert [r["name"] for r in data["tracker_runs"]] == [_hf_run_name(Path(db))]
    wrong = CliRunner().invoke(cli, ["analyze", db, "--run", "no-such-run"])
    assert wrong.exit_code == 2 and "Traceback" not in wrong.output
    assert "no run named 'no-such-run'" in wrong.output and "extreme-values" in wrong.output
    with pytest.raises(NoSuchRun):
        analyze(db, run="no-such-run")
