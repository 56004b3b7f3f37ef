"""Which tracker runs an analysis reads (ingest/trackers.py), and files that disagree (analyzers/sources.py).

Small LogRecords built here say exactly which file holds what; the runs at the end are real (the Trainer
reporting to W&B and MLflow, support/trackers.py).
"""
from __future__ import annotations

import math
import shutil

import pandas as pd
import pytest

from forensics.analyzers.sources import detect_source_disagreements, source_disagreements
from forensics.errors import NoSuchRun, SeveralRuns
from forensics.ingest.trackers import choose_run
from forensics.timeline import LogRecords, TrackerRun, build_timeline


def _frame(points: list[tuple[int, str, float]]) -> pd.DataFrame:
    return pd.DataFrame({"step": pd.Series([p[0] for p in points], dtype="int64"), "metric": [p[1] for p in points],
                         "value": pd.Series([p[2] for p in points], dtype="float64"), "wall_time": math.nan})


def _wandb(run_id: str, name: str = "", points=((10, "loss", 2.0),)) -> LogRecords:
    folder = f"/r/wandb/run-20240101_000000-{run_id}"
    run = TrackerRun("wandb", "/r/wandb", run_id, name=name, status="finished", folder=folder)
    return LogRecords(f"{folder}/run-{run_id}.wandb", "wandb", _frame(list(points)), tracker_run=run)


def _mlflow(run_id: str, name: str = "", status: str = "finished") -> LogRecords:
    run = TrackerRun("mlflow", "/r/mlflow.db", run_id, name=name, status=status)
    return LogRecords(f"/r/mlflow.db#{run_id}", "mlflow", _frame([(10, "loss", 2.0)]), tracker_run=run)


TRAINER_STATE = LogRecords("/r/output/trainer_state.json", "trainer_state", _frame([(10, "loss", 2.0)]))


def _sources(records) -> list[str]:
    return [r.source.rsplit("/", 1)[-1] for r in records]


def test_one_run_per_tracker_is_one_job_read_with_the_folders_other_logs():
    records = [TRAINER_STATE, _wandb("aaaa1111"), _mlflow("f" * 32)]
    kept, notes = choose_run(records, None, "/r")
    assert kept == records and notes == []


def test_several_runs_of_a_tracker_beside_other_logs_are_left_out_and_named():
    records = [TRAINER_STATE, _wandb("aaaa1111", "first"), _wandb("bbbb2222"), _mlflow("f" * 32)]
    kept, notes = choose_run(records, None, "/r")
    assert _sources(kept) == ["trainer_state.json", "mlflow.db#" + "f" * 32]
    (note,) = notes
    assert note.path == "/r/wandb" and "2 W&B runs not read (aaaa1111 'first', bbbb2222)" in note.reason


def test_several_runs_and_nothing_else_need_a_choice():
    with pytest.raises(SeveralRuns, match=r"2 tracker runs \(aaaa1111, bbbb2222\); name one with --run"):
        choose_run([_wandb("aaaa1111"), _wandb("bbbb2222")], None, "/r/wandb")


def test_run_picks_by_id_by_start_of_id_and_by_name_across_trackers():
    records = [_wandb("aaaa1111", "exp-7"), _wandb("bbbb2222", "exp-8"), _mlflow("c" * 32, "exp-7"),
               _mlflow("d" * 32, "exp-8")]
    assert _sources(choose_run(records, "exp-7", "/r")[0]) == ["run-aaaa1111.wandb", "mlflow.db#" + "c" * 32]
    assert _sources(choose_run(records, "bbbb", "/r")[0]) == ["run-bbbb2222.wandb"]
    assert _sources(choose_run(records, "d" * 32, "/r")[0]) == ["mlflow.db#" + "d" * 32]
    with pytest.raises(NoSuchRun, match="no run named 'bbb'"):  # 3 characters are too few to be the start of an id
        choose_run(records, "bbb", "/r")


def test_a_console_log_inside_a_run_folder_belongs_to_that_run():
    output_log = LogRecords("/r/wandb/run-20240101_000000-bbbb2222/files/output.log", "stdout",
                            _frame([(10, "loss", 9.0)]))
    records = [_wandb("aaaa1111"), _wandb("bbbb2222"), output_log]
    assert _sources(choose_run(records, "aaaa1111", "/r")[0]) == ["run-aaaa1111.wandb"]
    assert _sources(choose_run(records, "bbbb2222", "/r")[0]) == ["run-bbbb2222.wandb", "output.log"]


def test_a_deleted_run_is_read_only_when_named():
    records = [_mlflow("a" * 32, "live"), _mlflow("b" * 32, "gone", status="deleted")]
    assert _sources(choose_run(records, None, "/r")[0]) == ["mlflow.db#" + "a" * 32]
    assert _sources(choose_run(records, "gone", "/r")[0]) == ["mlflow.db#" + "b" * 32]


def test_a_folder_whose_only_run_is_deleted_reads_it_and_says_so():
    # chenmargalit_10X-ML-Engineer: the owner deleted the store's one run; 'nothing readable' would be false
    records, notes = choose_run([_mlflow("b" * 32, "gone", status="deleted")], None, "/r")
    assert _sources(records) == ["mlflow.db#" + "b" * 32]
    assert len(notes) == 1 and notes[0].note and "marked deleted" in notes[0].reason


def test_a_deleted_run_beside_other_logs_is_still_left_out():
    records, notes = choose_run([TRAINER_STATE, _mlflow("b" * 32, "gone", status="deleted")], None, "/r")
    assert _sources(records) == ["trainer_state.json"] and notes == []


def test_a_resumed_wandb_run_in_two_folders_is_one_run():
    first = _wandb("aaaa1111", points=((10, "loss", 2.0), (20, "loss", 1.5)))
    again = LogRecords("/r/wandb/run-20240102_000000-aaaa1111/run-aaaa1111.wandb", "wandb",
                       _frame([(30, "loss", 1.2)]), tracker_run=TrackerRun("wandb", "/r/wandb", "aaaa1111",
                                                                           folder="/r/wandb/run-20240102_000000-aaaa1111"))
    kept, notes = choose_run([first, again], None, "/r")
    assert len(kept) == 2 and notes == []
    assert [r.run_id for r in build_timeline(kept).tracker_runs] == ["aaaa1111"]


# --- files that disagree -------------------------------------------------------------------------

def _disagreeing(*records: LogRecords):
    return source_disagreements(build_timeline(list(records)))


def test_a_tracker_with_other_values_than_trainer_state_is_one_warning_naming_both():
    state = LogRecords("/r/output/trainer_state.json", "trainer_state",
                       _frame([(10, "loss", 2.0), (20, "loss", 1.5), (20, "grad_norm", math.nan)]))
    other = _wandb("aaaa1111", points=((10, "loss", 2.0), (20, "loss", 3.5), (20, "grad_norm", 0.8)))
    rows = _disagreeing(state, other)
    assert rows[["step", "metric", "value", "other_value"]].values.tolist()[0][:2] == [20, "grad_norm"]
    assert len(rows) == 2 and set(rows["source"]) == {state.source}
    (finding,) = detect_source_disagreements(build_timeline([state, other]))
    assert (finding.kind, finding.severity, finding.step, finding.end_step) == ("source_disagreement", "warning", 20, 20)
    assert "run-aaaa1111.wandb disagrees with output/trainer_state.json on 2 points (grad_norm, loss)" in finding.message
    assert finding.evidence["other_source"] == other.source


def test_copies_that_agree_do_not_disagree_tensorboard_float32_nan_and_rounded_console_values_included():
    state = LogRecords("/r/trainer_state.json", "trainer_state",
                       _frame([(10, "loss", 2.123456789), (20, "grad_norm", math.nan), (30, "loss", 0.1)]))
    board = LogRecords("/r/runs/events.out.tfevents.1", "tensorboard",
                       _frame([(10, "loss", float.fromhex("0x1.0fcd6ep+1")), (20, "grad_norm", math.nan)]))
    console = LogRecords("/r/train.log", "stdout", _frame([(10, "loss", 2.123), (30, "loss", 0.1)]))
    assert board.frame["value"].iloc[0] != 2.123456789  # the float32 copy TensorBoard keeps
    assert _disagreeing(state, board, console).empty


def test_a_timeline_with_one_file_has_nothing_to_compare():
    assert _disagreeing(TRAINER_STATE).empty
    assert detect_source_disagreements(build_timeline([])) == []


@pytest.mark.slow
def test_a_stale_wandb_folder_of_another_run_is_reported_beside_the_verdict(tracker_nan_run, tracker_healthy_run,
                                                                            tmp_path):
    from forensics.analysis import analyze

    nan_folder, facts = tracker_nan_run
    shutil.copytree(nan_folder / "output", tmp_path / "output")
    shutil.copytree(tracker_healthy_run[0] / "wandb", tmp_path / "wandb")
    result = analyze(tmp_path, check_checkpoints=False)
    assert (result.first_incident.kind, result.first_incident.step) == ("nonfinite_metric", facts.first_nonfinite_step)
    (finding,) = [f for f in result.findings if f.kind == "source_disagreement"]
    assert finding.evidence["other_source"].endswith(".wandb") and finding.step == facts.logged_steps[0]
    from forensics.report.text import analysis_text

    assert "Files disagree" in analysis_text(result)


def test_no_shipped_sample_run_has_files_that_disagree():
    """trainer_state.json at the root and in every checkpoint, TensorBoard beside them, a resumed run's two attempts."""
    from pathlib import Path

    from forensics.analysis import load_timeline

    samples = Path(__file__).parents[1] / "sample_runs"
    runs = [d for d in sorted(samples.iterdir()) if d.is_dir()]
    assert len(runs) >= 9
    for run in runs:
        assert source_disagreements(load_timeline(run)).empty, run.name
