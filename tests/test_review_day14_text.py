"""The text report names the files it could not read (up to three), --verbose shows where each run profile field was
read, and bisect's progress line counts its probes ("probe N of M at most"), on stderr and only on a terminal.

Runs are written in tmp_path as the Trainer writes them (trainer_state.json, TensorBoard folders under runs/); the
damaged event files are bytes no writer could have finished. The bisect search runs over CheckpointRefs with a
probe that answers from a list.
"""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from forensics.checkpoints.bisection import BinarySearch
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
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


def _refs(n: int) -> list[CheckpointRef]:
    return [CheckpointRef(f"checkpoint-{10 * i}", 10 * i, Path(f"/run/checkpoint-{10 * i}"), ())
            for i in range(1, n + 1)]


def _search(verdicts: dict[int, str], n: int) -> list[str]:
    """The progress messages of a search over n checkpoints whose status by step is `verdicts` (default ok)."""
    messages: list[str] = []

    def check(ref: CheckpointRef) -> CheckpointInfo:
        return CheckpointInfo(ref, verdicts.get(ref.step, "ok"))

    BinarySearch(_refs(n), check, messages.append).run()
    return messages


def test_each_bisect_probe_says_which_of_how_many_at_most():
    messages = _search({s: "nonfinite" for s in range(130, 330, 10)}, 32)  # first bad: checkpoint-130
    assert messages[0] == "probe 1 of 7 at most: checkpoint-320 (step 320): bad"  # 2 ends + ceil(log2(31)) halvings
    assert messages[1] == "probe 2 of 7 at most: checkpoint-10 (step 10): ok"
    assert [int(m.split()[1]) for m in messages] == list(range(1, len(messages) + 1)) and len(messages) <= 7


def test_an_unreadable_checkpoint_raises_the_most_probes_by_one():
    messages = _search({40: "unreadable", 30: "unreadable", 20: "nonfinite", 10: "ok"}, 4)
    assert [m.split(":")[0] for m in messages] == ["probe 1 of 4 at most", "probe 2 of 4 at most",
                                                   "probe 3 of 4 at most", "probe 4 of 4 at most"]


def test_bisect_says_no_progress_when_stderr_is_not_a_terminal():
    run = SAMPLE_RUNS / "qwen1_names"
    result = CliRunner().invoke(cli, ["bisect", str(run / "ckpt-15"), str(run / "ckpt-30")])
    assert result.exit_code == 1 and "probe" not in result.stderr
