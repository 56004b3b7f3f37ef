"""Tests of analyzers/overfitting.py: four evals whose later best is followed by a climb.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import json

import forensics


def test_four_evals_whose_later_best_is_followed_by_a_climb_are_overfitting(tmp_path):
    """haomingdouranggouqil's Qwen2-7B LoRA: eval 0.538, 0.416 (the best, second), 0.478, 0.526 while the training
    loss fell to 0.07. A four-eval log was judged only by its first eval as the best."""
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "loss": round(1.2 * 0.93 ** (s / 50), 4), "learning_rate": 1e-4} for s in range(50, 2001, 50)]
    history += [{"step": s, "eval_loss": v} for s, v in zip((500, 1000, 1500, 2000), (0.538, 0.416, 0.478, 0.526))]
    history.sort(key=lambda r: r["step"])
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 2000, "log_history": history}))
    a = forensics.analyze(run)
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 1500), a.findings
