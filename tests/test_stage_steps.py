"""The stages of one plan a JSON-lines log names in every record (`"phase": "phase0"`, then `"phase1"`, the step counter
restarting at each), put end to end rather than taken for a relaunch (forensics/ingest/stage_steps.py, through jsonl).

From corpus batch AS119 (RuthlessMercy307_AION-C: phase 0's held-out loss NaN at every evaluation, then phase 1)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics
from forensics.ingest import jsonl

CASE = Path(__file__).parent / "realworld" / "RuthlessMercy307_AION-C"


def _log(path: Path, stages: list[tuple[str, list[int], bool]]) -> Path:
    """One record every 200 steps for each (stage, its steps, whether its val_loss is NaN); the train loss falling."""
    lines, i = [], 0
    for name, steps, nan_eval in stages:
        for step in steps:
            val = math.nan if nan_eval else 1.0 - 0.01 * i
            lines.append(json.dumps({"phase": name, "step": step, "train_loss": 3.0 * 0.97 ** i, "val_loss": val}))
            i += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_later_phases_steps_are_put_after_the_phase_before(tmp_path):
    path = _log(tmp_path / "training_metrics.jsonl",
                [("phase0", list(range(200, 2001, 200)), False), ("phase1", list(range(200, 4001, 200)), False)])
    rec = jsonl.read(path)
    loss = rec.frame[rec.frame["metric"] == "loss"]["step"].tolist()
    assert loss[:10] == list(range(200, 2001, 200)) and loss[10:] == list(range(2200, 6001, 200))
    assert any("phase0, phase1" in n for n in rec.notes)


def test_a_nan_evaluation_of_the_first_phase_is_the_runs_first_incident(tmp_path):
    _log(tmp_path / "output" / "training_metrics.jsonl",
         [("phase0", list(range(200, 2001, 200)), True), ("phase1", list(range(200, 6001, 200)), False)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.first_incident is not None
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("nonfinite_metric", 200)


def test_a_phase_relaunched_keeps_its_steps_as_written(tmp_path):
    # phase1's counter goes back inside phase1: a relaunch of that phase, an attempt
    stages = [("phase0", [200, 400], False), ("phase1", [200, 400, 600], False), ("phase1", [200, 400], False)]
    rec = jsonl.read(_log(tmp_path / "training_metrics.jsonl", stages))
    assert rec.frame[rec.frame["metric"] == "loss"]["step"].tolist() == [200, 400, 200, 400, 600, 200, 400]
    assert not any("phase" in n for n in rec.notes)


def test_the_whole_plan_launched_again_keeps_its_steps_as_written(tmp_path):
    stages = [("phase0", [200, 400], False), ("phase1", [200, 400], False), ("phase0", [200, 400], False)]
    rec = jsonl.read(_log(tmp_path / "training_metrics.jsonl", stages))
    assert rec.frame[rec.frame["metric"] == "loss"]["step"].tolist() == [200, 400, 200, 400, 200, 400]


def test_a_log_without_stage_names_keeps_its_restart(tmp_path):
    path = tmp_path / "training_metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "loss": 2.0}) + "\n" for s in (1, 2, 3, 1, 2)))
    assert jsonl.read(path).frame["step"].tolist() == [1, 2, 3, 1, 2]


def test_the_corpus_case_is_judged_on_both_phases():
    analysis = forensics.analyze(CASE)
    assert analysis.status == "warning"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("nonfinite_metric", 200)
