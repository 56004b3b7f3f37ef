"""Damaged input found by review 13: each file the program cannot read in full is named with its problem, the
rest is analysed, and the verdict never rests on a half-written or undecodable record.

Runs are written in tmp_path the way their writers write them (MLflow's file store appends
"<timestamp ms> <value> <step>\\n" a point); each damage test has a twin on the undamaged run where the rule
must not fire.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from forensics.analysis import analyze, load_timeline

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

