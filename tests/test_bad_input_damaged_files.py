"""Tests of damaged or unusual input: cut, undecodable or special files, bad usage, unloadable checkpoints.

Damaged input found by review 13: each file the program cannot read in full is named with its problem, the
rest is analysed, and the verdict never rests on a half-written or undecodable record.

Runs are written in tmp_path the way their writers write them (MLflow's file store appends
"<timestamp ms> <value> <step>\\n" a point); each damage test has a twin on the undamaged run where the rule
must not fire.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from forensics.analysis import analyze, load_timeline
from forensics.cli import cli

STEPS = 200


def _losses(steps: int = STEPS) -> list[float]:
    """A run that learned: 2.76 falling to about 0.4, with small per-step wobble."""
    return [round(0.4 + 2.36 * math.exp(-s / 40) + 0.02 * math.sin(s * 1.7), 4) for s in range(1, steps + 1)]


def _mlflow_run(root: Path) -> Path:
    """An MLflow file store with one run logging `loss` at steps 1..STEPS, as mlflow's FileStore writes it."""
    run = root / "mlruns" / "0" / "abc123"
    (run / "metrics").mkdir(parents=True)
    (run / "params").mkdir()
    (root / "mlruns" / "0" / "meta.yaml").write_text("experiment_id: '0'\nlifecycle_stage: active\nname: Default\n")
    (run / "meta.yaml").write_text("run_id: abc123\nrun_name: r\nexperiment_id: '0'\nstatus: 3\n"
                                   "lifecycle_stage: active\nstart_time: 1700000000000\n")
    points = "".join(f"{1700000000000 + 1000 * s} {v} {s}\n" for s, v in enumerate(_losses(), 1))
    (run / "metrics" / "loss").write_text(points)
    (run / "params" / "learning_rate").write_text("2e-05")
    return run / "metrics" / "loss"


def _cut_notes(analysis) -> list[str]:
    return [s.reason for s in analysis.skipped if "cut" in s.reason]


@pytest.mark.parametrize("keep", [4, 11, 21, 23])  # inside the timestamp, the value, the step's first digits
def test_mlflow_metric_line_cut_mid_write_is_dropped_and_named(tmp_path, keep):
    loss = _mlflow_run(tmp_path)
    text = loss.read_text()
    last_line_start = text.rstrip("\n").rfind("\n") + 1
    loss.write_text(text[:last_line_start + keep])  # the last point half-written
    analysis = analyze(tmp_path)
    steps = load_timeline(tmp_path).series("loss").index
    assert list(steps) == list(range(1, STEPS))  # the 199 whole points, no restart at step 0 or 12
    assert analysis.status == "healthy"
    assert [n for n in _cut_notes(analysis) if "metrics/loss" in n]


def test_mlflow_metric_file_written_whole_has_no_cut_note(tmp_path):
    _mlflow_run(tmp_path)
    analysis = analyze(tmp_path)
    assert list(load_timeline(tmp_path).series("loss").index) == list(range(1, STEPS + 1))
    assert analysis.status == "healthy" and not _cut_notes(analysis)


# --- only regular files are read ------------------------------------------------------------------------------------

def _trainer_state(folder: Path, steps: int = 60, every: int = 5) -> Path:
    """A trainer_state.json as the HF Trainer writes it: a log entry every `every` steps of a run that learned."""
    losses = _losses(steps)
    history = [{"epoch": round(s / steps, 4), "grad_norm": 1.2, "learning_rate": 2e-05 * (1 - s / steps),
                "loss": losses[s - 1], "step": s} for s in range(every, steps + 1, every)]
    state = {"global_step": steps, "max_steps": steps, "logging_steps": every, "log_history": history}
    path = folder / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2))
    return path


def _analyze_within(folder: Path, seconds: float = 60):
    """analyze(folder), or None when it has not returned within `seconds` (blocked on a pipe, reading forever)."""
    done: list = []
    worker = threading.Thread(target=lambda: done.append(analyze(folder)), daemon=True)
    worker.start()
    worker.join(seconds)
    return done[0] if done else None


def _skipped_reason(analysis, path: Path) -> str:
    return next((s.reason for s in analysis.skipped if Path(s.path).name == path.name), "")


@pytest.mark.parametrize("name", ["trainer_log.jsonl", "model.safetensors"])
def test_a_named_pipe_among_the_run_files_is_skipped_by_name_not_waited_on(tmp_path, name):
    _trainer_state(tmp_path)
    pipe = tmp_path / name
    os.mkfifo(pipe)
    analysis = _analyze_within(tmp_path)
    assert analysis is not None, "analyze blocked on the pipe"
    assert "pipe" in _skipped_reason(analysis, pipe)
    assert analysis.status == "healthy"  # the trainer_state.json beside it is whole and shows the run learned


def test_a_link_to_a_device_is_skipped_by_name(tmp_path):
    _trainer_state(tmp_path)
    link = tmp_path / "trainer_log.jsonl"
    link.symlink_to("/dev/null")  # /dev/zero does the same harm without end; /dev/null keeps the test cheap
    analysis = _analyze_within(tmp_path)
    assert "device" in _skipped_reason(analysis, link)


def test_regular_files_and_links_to_them_are_read_and_not_skipped(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    state = _trainer_state(real)
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").symlink_to(state)
    analysis = analyze(run)
    assert analysis.status == "healthy" and not analysis.skipped


# --- bytes that are not UTF-8 cost only what they sit in -----------------------------------------------------------

def _llamafactory_log(folder: Path, steps: int = STEPS, every: int = 5) -> Path:
    """A LLaMA-Factory trainer_log.jsonl (its LogCallback's keys), one line every `every` steps."""
    losses = _losses(steps)
    lines = [json.dumps({"current_steps": s, "total_steps": steps, "loss": losses[s - 1], "lr": 2e-05,
                         "epoch": round(s / steps, 2), "percentage": round(100 * s / steps, 2),
                         "elapsed_time": f"0:00:{s // 5:02d}", "remaining_time": "0:01:00"})
             for s in range(every, steps + 1, every)]
    path = folder / "trainer_log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _latin1_in_a_string(path: Path, line: int) -> None:
    """One string value of line `line` (1-based) rewritten with a latin-1 'é', as a tool in another locale writes."""
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1].replace(b'"remaining_time": "', b'"remaining_time": "caf\xe9 ', 1)
    path.write_bytes(b"\n".join(lines))


def _not_utf8_notes(analysis) -> list[str]:
    return [f"{Path(s.path).name}: {s.reason}" for s in analysis.skipped if "not UTF-8" in s.reason]


def test_a_latin1_byte_in_one_jsonl_line_is_replaced_and_named_and_every_point_kept(tmp_path):
    log = _llamafactory_log(tmp_path)
    _latin1_in_a_string(log, 20)
    analysis = analyze(tmp_path)
    assert list(load_timeline(tmp_path).series("loss").index) == list(range(5, STEPS + 1, 5))
    assert analysis.status == "healthy"
    assert _not_utf8_notes(analysis) == ["trainer_log.jsonl: partly read: bytes that are not UTF-8 were "
                                         "replaced (1 line)"]


def test_a_latin1_path_in_trainer_state_is_replaced_and_named_and_every_entry_kept(tmp_path):
    state = _trainer_state(tmp_path)
    state.write_bytes(state.read_bytes().replace(b'"global_step"', b'"best_model_checkpoint": "/home/jos\xe9/out",'
                                                 b'\n  "global_step"', 1))
    analysis = analyze(tmp_path)
    assert list(load_timeline(tmp_path).series("loss").index) == list(range(5, 61, 5))
    assert analysis.status == "healthy" and len(_not_utf8_notes(analysis)) == 1


def test_a_utf8_log_gets_no_encoding_note(tmp_path):
    _llamafactory_log(tmp_path)
    analysis = analyze(tmp_path)
    assert analysis.status == "healthy" and not analysis.skipped


# --- a console captured as UTF-16 (Windows PowerShell's `>`) --------------------------------------------------------

def _console_log(steps: int = STEPS, every: int = 5) -> str:
    """The HF Trainer's console: its log dicts as Python prints them, one every `every` steps, then the summary."""
    losses = _losses(steps)
    lines = [f"{{'loss': {losses[s - 1]}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {s / steps:.2f}}}"
             for s in range(every, steps + 1, every)]
    lines.append("{'train_runtime': 120.5, 'train_samples_per_second': 13.3, 'train_loss': 0.9, 'epoch': 1.0}")
    return "\n".join(lines) + "\n"


def _loss_values(folder: Path) -> list[float]:
    return list(load_timeline(folder).series("loss").values)


def test_a_utf16_console_log_is_read_as_its_text(tmp_path):
    (tmp_path / "utf8").mkdir()
    (tmp_path / "utf16").mkdir()
    (tmp_path / "utf8" / "train.log").write_text(_console_log(), encoding="utf-8")
    (tmp_path / "utf16" / "train.log").write_text(_console_log(), encoding="utf-16")  # BOM, then UTF-16 LE
    utf8, utf16 = analyze(tmp_path / "utf8"), analyze(tmp_path / "utf16")
    assert len(_loss_values(tmp_path / "utf8")) == STEPS // 5
    assert _loss_values(tmp_path / "utf16") == _loss_values(tmp_path / "utf8")
    assert utf16.status == utf8.status == "healthy"


def test_stray_bom_bytes_before_utf8_text_are_not_read_as_utf16(tmp_path):
    (tmp_path / "train.log").write_bytes(b"\xff\xfe" + _console_log().encode())
    assert len(_loss_values(tmp_path)) == STEPS // 5


def _notebook(console: str) -> str:
    """An nbformat 4 notebook whose one code cell printed `console` (a stream output, a list of lines)."""
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": ["trainer.train()"],
            "outputs": [{"name": "stdout", "output_type": "stream", "text": console.splitlines(keepends=True)}]}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_a_utf16_notebook_is_read_as_its_text(tmp_path):
    (tmp_path / "utf8").mkdir()
    (tmp_path / "utf16").mkdir()
    (tmp_path / "utf8" / "train.ipynb").write_text(_notebook(_console_log()), encoding="utf-8")
    (tmp_path / "utf16" / "train.ipynb").write_text(_notebook(_console_log()), encoding="utf-16")
    assert len(_loss_values(tmp_path / "utf8")) == STEPS // 5
    assert _loss_values(tmp_path / "utf16") == _loss_values(tmp_path / "utf8")


# --- usage errors said as such --------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["analyze", "scan"])
@pytest.mark.parametrize("workers", ["-3", "0"])
def test_a_worker_count_below_one_is_a_usage_error(tmp_path, command, workers):
    _trainer_state(tmp_path)
    result = CliRunner().invoke(cli, [command, str(tmp_path), "--workers", workers])
    assert result.exit_code == 2 and "--workers" in result.output


def test_a_worker_count_of_one_is_taken(tmp_path):
    _trainer_state(tmp_path)
    assert CliRunner().invoke(cli, ["analyze", str(tmp_path), "--workers", "1"]).exit_code == 0


def test_an_html_path_under_a_file_says_it_is_a_file(tmp_path):
    _trainer_state(tmp_path)
    (tmp_path / "x.html").write_text("<html></html>")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--html", str(tmp_path / "x.html" / "y.html")])
    assert result.exit_code == 2 and "x.html is a file" in result.output and "does not exist" not in result.output


def test_an_html_path_under_a_missing_folder_says_it_does_not_exist(tmp_path):
    _trainer_state(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--html", str(tmp_path / "no" / "y.html")])
    assert result.exit_code == 2 and "does not exist" in result.output


# --- bisect to a checkpoint that cannot be read ---------------------------------------------------------------------

SAMPLE_HEALTHY = Path(__file__).resolve().parents[1] / "sample_runs" / "healthy"


def _healthy_checkpoints(tmp_path: Path) -> Path:
    """A copy of the sample run that trained well (checkpoints 20, 40, 60 of a tiny Llama, the real Trainer's)."""
    return Path(shutil.copytree(SAMPLE_HEALTHY, tmp_path / "run"))


def test_bisect_to_a_cut_checkpoint_is_a_usage_error_naming_it(tmp_path):
    run = _healthy_checkpoints(tmp_path)
    weights = run / "checkpoint-40" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a save cut short
    result = CliRunner().invoke(cli, ["bisect", str(run / "checkpoint-20"), str(run / "checkpoint-40")])
    assert result.exit_code == 2 and "checkpoint-40" in result.output and "first bad" not in result.output


def test_bisect_between_readable_checkpoints_answers(tmp_path):
    run = _healthy_checkpoints(tmp_path)
    result = CliRunner().invoke(cli, ["bisect", str(run / "checkpoint-20"), str(run / "checkpoint-40")])
    assert result.exit_code == 0 and "first bad: none" in result.output


# --- nothing readable, folders named as files, numbers written as strings -------------------------------------------

def test_a_folder_holding_only_an_unloadable_blob_is_nothing_readable(tmp_path):
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 4)  # no pickle, no safetensors header
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path)])
    assert result.exit_code == 2 and "nothing readable" in result.output and "blob.bin" in result.output


def test_a_folder_holding_only_a_readable_checkpoint_is_analyzed(tmp_path):
    shutil.copytree(SAMPLE_HEALTHY / "checkpoint-20", tmp_path / "checkpoint-20",
                    ignore=shutil.ignore_patterns("trainer_state.json"))
    assert CliRunner().invoke(cli, ["analyze", str(tmp_path)]).exit_code == 0


def test_a_folder_named_like_a_weights_file_is_named(tmp_path):
    run = _healthy_checkpoints(tmp_path)
    weights = run / "checkpoint-40" / "model.safetensors"
    weights.unlink()
    weights.mkdir()
    analysis = analyze(run)
    assert "folder named like a weights file" in _skipped_reason(analysis, weights)


def test_a_healthy_run_has_no_folder_named_like_weights(tmp_path):
    assert not [s for s in analyze(_healthy_checkpoints(tmp_path)).skipped if "folder named" in s.reason]


def test_numbers_written_as_strings_in_trainer_state_are_read_as_numbers(tmp_path):
    state = _trainer_state(tmp_path)
    history = json.loads(state.read_text())
    for entry in history["log_history"]:
        entry.update({k: str(v) for k, v in entry.items() if k in ("loss", "grad_norm", "learning_rate")})
    state.write_text(json.dumps(history, indent=2))
    analysis = analyze(tmp_path)
    assert list(load_timeline(tmp_path).series("loss").values) == [float(e["loss"]) for e in history["log_history"]]
    assert analysis.status == "healthy"


def _notebook_cells_as_dict(text: str) -> str:
    notebook = json.loads(text)
    notebook["cells"] = {str(i): cell for i, cell in enumerate(notebook["cells"])}
    return json.dumps(notebook)


@pytest.mark.parametrize("damage, problem", [
    (lambda text: text[:150], "the notebook may be cut"),  # cut before its first output
    (_notebook_cells_as_dict, "no list of cells"),
])
def test_a_damaged_notebook_is_named_with_its_problem(tmp_path, damage, problem):
    # a short head: no training line in sight, so discovery cannot tell it from a notebook without training
    (tmp_path / "train.ipynb").write_text(damage(_notebook(_console_log())))
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path)])
    assert result.exit_code == 2 and "train.ipynb" in result.output and problem in result.output


def test_a_whole_notebook_without_training_is_passed_over_in_silence(tmp_path):
    (tmp_path / "prep.ipynb").write_text(_notebook("tokenized 12000 examples\n"))
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path)])
    assert result.exit_code == 2 and "prep.ipynb" not in result.output
    assert "no training logs or checkpoints found" in result.output


# --- two logs of the same metric at the same steps ------------------------------------------------------------------

def _nan_from(path: Path, step: int) -> None:
    """The JSON-lines log's loss made NaN (json.dumps writes a bare NaN) from `step` on."""
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in entries:
        if entry["current_steps"] >= step:
            entry["loss"] = math.nan
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")


def test_a_nan_one_log_shows_is_not_hidden_by_a_finite_value_of_another(tmp_path):
    _trainer_state(tmp_path, steps=STEPS)
    _nan_from(_llamafactory_log(tmp_path), 150)
    loss = load_timeline(tmp_path).series("loss")
    assert loss.loc[:145].notna().all() and loss.loc[150:].isna().all()
    assert analyze(tmp_path).status == "broken"


def test_two_logs_that_agree_read_as_one_finite_curve(tmp_path):
    _trainer_state(tmp_path, steps=STEPS)
    _llamafactory_log(tmp_path)
    loss = load_timeline(tmp_path).series("loss")
    assert list(loss.index) == list(range(5, STEPS + 1, 5)) and loss.notna().all()
    assert analyze(tmp_path).status == "healthy"
