"""Two runs' logs in one folder: where two logs hold the loss at the same steps with other values, the analysis reads
the one covering more steps, never a curve made of both, and a Skipped line names both files. Copies of one run's
points, a resume that supersedes its attempt, a NaN only one log shows and a console numbered by estimate are not two
runs.

Logs are written in tmp_path as their writers write them: the HF Trainer's trainer_state.json (json.dumps, indent 2,
loss as logged), LLaMA-Factory's trainer_log.jsonl (one JSON object a logging step, the loss rounded to 4 decimals).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from forensics.analysis import analyze, load_timeline


def _loss(step: int, start: float, end: float, scale: float) -> float:
    """A run that learned: `start` falling toward `end`, with a little per-step wobble."""
    return end + (start - end) * math.exp(-step / scale) + 0.01 * math.sin(step * 1.7)


def _trainer_state(folder: Path, steps: range, start: float, end: float, scale: float) -> Path:
    history = [{"epoch": round(s / steps.stop, 4), "grad_norm": 0.9, "learning_rate": 3e-3 * (1 - s / steps.stop),
                "loss": _loss(s, start, end, scale), "step": s} for s in steps]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trainer_state.json"
    path.write_text(json.dumps({"global_step": steps[-1], "max_steps": steps[-1], "logging_steps": steps.step,
                                "log_history": history}, indent=2))
    return path


def _trainer_log(folder: Path, steps: range, start: float, end: float, scale: float, nan_from=None) -> Path:
    lines = []
    for s in steps:
        loss = float("nan") if nan_from is not None and s >= nan_from else round(_loss(s, start, end, scale), 4)
        lines.append(json.dumps({"current_steps": s, "total_steps": steps[-1], "loss": loss, "learning_rate": 5e-05,
                                 "epoch": round(s / steps.stop, 2), "percentage": round(100 * s / steps[-1], 2)}))
    path = folder / "trainer_log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _other_run_lines(analysis) -> list:
    return [s for s in analysis.skipped if "two runs' logs in one folder" in s.reason]


def test_a_shorter_log_of_another_run_is_left_out_and_both_files_named(tmp_path):
    _trainer_state(tmp_path, range(5, 61, 5), start=4.8, end=3.3, scale=60)       # one run: 12 points
    _trainer_log(tmp_path, range(5, 916, 5), start=1.2, end=0.78, scale=200)       # another: 183 points
    analysis = analyze(tmp_path)
    loss = analysis.timeline.series("loss")
    assert list(loss.index) == list(range(5, 916, 5))
    assert loss.iloc[0] == round(_loss(5, 1.2, 0.78, 200), 4)  # the long log's own first point, not 4.8
    assert set(analysis.timeline.final()["source"]) == {str(tmp_path / "trainer_log.jsonl")}
    (line,) = _other_run_lines(analysis)
    assert line.path == str(tmp_path / "trainer_state.json")
    assert "trainer_log.jsonl" in line.reason and "covers more steps (183; this one 12)" in line.reason
    assert analysis.status == "healthy"


def test_the_log_covering_more_steps_is_read_whichever_its_format(tmp_path):
    _trainer_state(tmp_path, range(5, 501, 5), start=2.5, end=1.0, scale=100)      # 100 points
    _trainer_log(tmp_path, range(5, 61, 5), start=6.0, end=5.0, scale=50)          # another run's 12
    timeline = load_timeline(tmp_path)
    assert set(timeline.final()["source"]) == {str(tmp_path / "trainer_state.json")}
    (line,) = [s for s in timeline.skipped if "two runs' logs" in s.reason]
    assert line.path == str(tmp_path / "trainer_log.jsonl") and "trainer_state.json" in line.reason


def test_the_two_logs_llamafactory_writes_of_one_run_are_both_read(tmp_path):
    _trainer_state(tmp_path, range(5, 301, 5), start=2.0, end=0.8, scale=80)
    _trainer_log(tmp_path, range(5, 301, 5), start=2.0, end=0.8, scale=80)        # the same losses, rounded
    analysis = analyze(tmp_path)
    assert not _other_run_lines(analysis) and analysis.status == "healthy"
    assert len(analysis.timeline.series("loss")) == 60


def test_a_nan_only_one_log_shows_is_no_second_run(tmp_path):
    _trainer_state(tmp_path, range(5, 301, 5), start=2.0, end=0.8, scale=80)
    _trainer_log(tmp_path, range(5, 301, 5), start=2.0, end=0.8, scale=80, nan_from=250)
    analysis = analyze(tmp_path)
    assert not _other_run_lines(analysis)
    assert analysis.status == "broken" and analysis.first_incident.step == 250


def test_a_resume_that_supersedes_its_attempt_is_no_second_run(tmp_path):
    # attempt 1 saved checkpoint-80 and went on; the run resumed from step 20 with other batches: from step 25 on the
    # final trainer_state.json holds other losses than checkpoint-80's copy of attempt 1 (12 of the 16 shared steps)
    _trainer_state(tmp_path / "checkpoint-80", range(5, 81, 5), start=2.0, end=0.8, scale=40)
    final = _trainer_state(tmp_path, range(5, 121, 5), start=2.0, end=0.8, scale=40)
    state = json.loads(final.read_text())
    for entry in state["log_history"]:
        if entry["step"] >= 25:
            entry["loss"] += 0.6
    final.write_text(json.dumps(state, indent=2))
    analysis = analyze(tmp_path)
    assert not _other_run_lines(analysis)
    assert analysis.timeline.series("loss")[60] == state["log_history"][11]["loss"]  # the resumed run's
