"""Tests of the overfitting rule (analyzers/overfitting.py): an eval loss best at its first evaluation.

What the lead's own reading of the day's new real cases found: each test FAILS on the code before its change."""
from __future__ import annotations

import json
import warnings

import forensics


def test_an_eval_loss_best_at_its_first_evaluation_is_judged_without_a_numpy_warning(tmp_path):
    """A QLoRA run whose eval loss is lowest at its first evaluation and climbs after it while the training loss falls:
    the overfitting check compared the evals after the best with the evals before it, of which there were none, and
    numpy printed 'Mean of empty slice' on the user's terminal. It is judged (overfitting from the first eval after the
    best) with no warning printed."""
    evals = {200: 1.467, 400: 1.470, 600: 1.583, 800: 1.520, 1000: 1.780, 1200: 2.033, 1400: 2.243, 1600: 2.148,
             1800: 2.263}
    history = []
    for step in range(20, 1801, 20):
        history.append({"epoch": round(step / 600, 3), "loss": round(1.9 * 0.9985 ** step, 4), "grad_norm": 1.0,
                        "learning_rate": 4e-4, "step": step})
        if step in evals:
            history.append({"epoch": round(step / 600, 3), "eval_loss": evals[step], "step": step})
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 1800, "log_history": history}))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        a = forensics.analyze(tmp_path)
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 400)
