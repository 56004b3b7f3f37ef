"""Tests of the text report (report/text.py): files it could not read, --verbose profile fields.

From the day-14 review of the report's text. Runs are written in tmp_path as the Trainer writes them
(trainer_state.json, TensorBoard folders under runs/); the damaged event files are bytes no writer could have
finished."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from forensics.cli import cli


SAMPLE_RUNS = Path(__file__).resolve().parents[1] / "sample_runs"


def _run(folder: Path, damaged_event_files: int) -> Path:
    """A 50-step Trainer run whose loss falls from 2.375 to 1.125, with `damaged_event_files` unreadable TB files."""
    history = [{"step": s, "epoch": s / 50, "loss": 2.5 - s / 40, "grad_norm": 1.0, "learning_rate": 1e-4}
               for s in range(5, 55, 5)]
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 50, "max_steps": 50,
                                                           "log_history": history}))
    for i in range(damaged_event_files):
        events = folder / "runs" / f"Nov27_10-0{i}-00_host" / f"events.out.tfevents.170000000{i}.host.1.0"
        events.parent.mkdir(parents=True)
        events.write_bytes(b"\x00\x01cut" * 3)
    return folder


def _text(*args) -> str:
    result = CliRunner().invoke(cli, ["analyze", *map(str, args)])
    assert result.exit_code in (0, 1), result.output
    return " ".join(result.stdout.split())


def test_the_files_that_could_not_be_read_are_named_up_to_three_then_counted(tmp_path):
    text = _text(_run(tmp_path / "run", 5))
    assert "5 files could not be read in full: runs/Nov27_10-00-00_host/events.out.tfevents.1700000000.host.1.0" in text
    assert "runs/Nov27_10-02-00_host/events.out.tfevents.1700000002.host.1.0 and 2 more (--verbose lists all)" in text
    assert "1700000003" not in text


def test_one_file_that_could_not_be_read_is_named(tmp_path):
    text = _text(_run(tmp_path / "run", 1))
    assert ("1 file could not be read in full: runs/Nov27_10-00-00_host/events.out.tfevents.1700000000.host.1.0 "
            "(--verbose says why)") in text


def test_a_run_read_whole_names_no_skipped_file(tmp_path):
    text = _text(_run(tmp_path / "run", 0))
    assert "could not be read" not in text and "Skipped" not in text


def test_verbose_shows_where_each_run_profile_field_was_read():
    data = json.loads(CliRunner().invoke(cli, ["analyze", str(SAMPLE_RUNS / "nan_masked"), "--json"]).stdout)
    evidence = data["run_profile"]["evidence"]
    verbose = CliRunner().invoke(cli, ["analyze", str(SAMPLE_RUNS / "nan_masked"), "--verbose"]).stdout
    assert evidence and "Run profile, from the run's own files:" in verbose
    for field, why in evidence.items():
        assert f"  {field}: {why}" in verbose.splitlines()


def test_the_one_screen_report_keeps_the_profile_to_one_line():
    brief = CliRunner().invoke(cli, ["analyze", str(SAMPLE_RUNS / "nan_masked")]).stdout
    assert "Run profile, from" not in brief and "method full" in brief
