"""A W&B run log's exit record and the console W&B captured: a run stopped by hand or crashed is a `run_crashed`
warning at its last logged step; a run that exited 0, one still being written, and one that reached its planned end
before failing in teardown are not (analyzers/tracker_exit.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.analysis import analyze
from forensics.ingest import wandb
from tests.support.wandb_log import framed, record

REALWORLD = Path(__file__).parent / "realworld"
TRACEBACK = ["Traceback (most recent call last):\n", '  File "train.py", line 80, in <module>\n',
             "    loss.backward()\n"]


def _run_log(folder: Path, exit_code: int | None, console: list[str], max_steps: int = 1000, rows: int = 60) -> Path:
    """A learning run (loss 3.0 falling smoothly to ~1.0 over `rows` logged steps of 10) with `console` captured as
    W&B's output_raw records and, unless None, its exit record."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    config = pb.ConfigRecord(update=[pb.ConfigItem(key="max_steps", value_json=str(max_steps)),
                                     pb.ConfigItem(key="learning_rate", value_json="0.0001")])
    history = [record(history=pb.HistoryRecord(item=[
        pb.HistoryItem(key="train/loss", value_json=f"{1.0 + 2.0 * 0.95 ** i:.4f}"),
        pb.HistoryItem(key="train/global_step", value_json=str(10 * (i + 1))),
        pb.HistoryItem(key="_step", value_json=str(i))])) for i in range(rows)]
    output = [record(output_raw=pb.OutputRawRecord(output_type=0, line=line)) for line in console]
    messages = [record(run=pb.RunRecord(run_id="abc", project="p", config=config)), *history, *output]
    if exit_code is not None:
        messages.append(record(exit=pb.RunExitRecord(exit_code=exit_code)))
    path = folder / "wandb" / "run-20240101_000000-abc" / "run-abc.wandb"
    path.parent.mkdir(parents=True)
    path.write_bytes(framed(messages))
    return path


def _exit_findings(analysis):
    return [f for f in analysis.findings if f.kind == "run_crashed"]


def test_the_exit_code_and_the_captured_consoles_last_exception_are_read(tmp_path):
    path = _run_log(tmp_path, 255, ["step 590 loss 1.02\n", *TRACEBACK, "KeyboardInterrupt\n"])
    meta = wandb.read(path).meta
    assert meta["exit_code"] == 255 and meta["console_exception"] == "KeyboardInterrupt"
    assert "console_saved" not in meta


def test_a_run_stopped_by_hand_without_a_save_is_a_warning_at_its_last_step(tmp_path):
    _run_log(tmp_path, 255, [*TRACEBACK, "KeyboardInterrupt\n"])
    a = analyze(tmp_path)
    [f] = _exit_findings(a)
    assert a.status == "warning" and f.severity == "warning" and f.step == 600
    assert "stopped by hand" in f.message and "exit code 255" in f.message and "check" in f.message


def test_a_run_that_crashed_names_its_error(tmp_path):
    _run_log(tmp_path, 1, [*TRACEBACK, "RuntimeError: CUDA error: an illegal memory access was encountered\n"])
    [f] = _exit_findings(analyze(tmp_path))
    assert f.severity == "warning" and "crashed" in f.message and "RuntimeError: CUDA error" in f.message


def test_a_nonzero_exit_without_an_error_line_is_a_warning_of_unknown_cause(tmp_path):
    _run_log(tmp_path, 1, ["step 590 loss 1.02\n"])
    [f] = _exit_findings(analyze(tmp_path))
    assert f.severity == "warning" and "cause" in f.message and "not say" in f.message


def test_a_run_stopped_by_hand_after_saving_a_checkpoint_is_info(tmp_path):
    _run_log(tmp_path, 255, ["saving checkpoint to out\n", *TRACEBACK, "KeyboardInterrupt\n"])
    a = analyze(tmp_path)
    [f] = _exit_findings(a)
    assert f.severity == "info" and "saving checkpoint to out" in f.message and a.status == "healthy"


def test_a_run_that_reached_its_planned_end_and_failed_in_teardown_is_info(tmp_path):
    _run_log(tmp_path, 1, [*TRACEBACK, "OSError: [Errno 28] No space left on device\n"], max_steps=600)
    a = analyze(tmp_path)
    [f] = _exit_findings(a)
    assert f.severity == "info" and "planned" in f.message and a.status == "healthy"


@pytest.mark.parametrize("exit_code", [0, None])
def test_a_run_that_exited_0_or_is_still_being_written_stays_silent(tmp_path, exit_code):
    _run_log(tmp_path, exit_code, ["step 590 loss 1.02\n"])
    a = analyze(tmp_path)
    assert _exit_findings(a) == [] and a.status == "healthy"


def test_the_coati_sft_run_stopped_by_hand_before_its_save_is_a_warning():
    a = analyze(REALWORLD / "480284856_RLHF_Training")
    [f] = _exit_findings(a)
    assert a.status == "warning" and f.severity == "warning" and "KeyboardInterrupt" in f.message


def test_the_nanogpt_run_stopped_by_hand_after_its_checkpoint_stays_healthy():
    a = analyze(REALWORLD / "bdytx5_grokking")
    assert a.status == "healthy" and all(f.severity == "info" for f in _exit_findings(a))
