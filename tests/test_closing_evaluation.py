"""The evaluation the Trainer's example scripts run after `trainer.save_state()` lands in eval_results.json /
all_results.json beside the state, not in its log_history: read as an eval point at the state's last step. A run of
30 epochs over 23 texts whose one logged training loss (1.11, the mean over steps 1-500) stands beside a closing
eval loss of 0.033 learned those texts by heart (memorization at the evaluation), which the single point alone could
not show."""
from __future__ import annotations

import json

import forensics


def _run(tmp_path, *, eval_in_history=False, results=None):
    history = [{"epoch": 21.74, "learning_rate": 1.38e-05, "loss": 1.1133, "step": 500},
               {"epoch": 30.0, "step": 690, "total_flos": 1.4e15, "train_runtime": 399.4,
                "train_samples_per_second": 1.728}]
    if eval_in_history:
        history.insert(1, {"epoch": 30.0, "eval_loss": 0.9, "step": 690})
    (tmp_path / "trainer_state.json").write_text(json.dumps(
        {"global_step": 690, "max_steps": 690, "num_train_epochs": 30, "log_history": history}))
    results = {"epoch": 30.0, "eval_loss": 0.03293671831488609, "eval_runtime": 4.03, "eval_samples": 23,
               "perplexity": 1.0335} if results is None else results
    (tmp_path / "eval_results.json").write_text(json.dumps(results))
    return tmp_path


def test_the_closing_evaluation_beside_the_state_is_an_eval_point_at_its_last_step(tmp_path):
    a = forensics.analyze(_run(tmp_path))
    evals = a.timeline.series("eval_loss")
    assert list(evals.index) == [690] and abs(float(evals.iloc[0]) - 0.0329) < 1e-3
    assert "eval_runtime" not in set(a.timeline.frame["metric"])


def test_a_single_logged_window_mean_beside_a_closing_eval_near_zero_is_memorization(tmp_path):
    a = forensics.analyze(_run(tmp_path))
    assert a.first_incident.kind == "memorization" and a.first_incident.step == 690
    assert "logged at step 500" in a.first_incident.message


def test_an_evaluation_already_in_the_history_is_not_read_twice(tmp_path):
    a = forensics.analyze(_run(tmp_path, eval_in_history=True))
    assert list(a.timeline.series("eval_loss")) == [0.9]


def test_a_results_file_without_an_eval_loss_adds_nothing(tmp_path):
    a = forensics.analyze(_run(tmp_path, results={"epoch": 30.0, "train_runtime": 399.4}))
    assert "eval_loss" not in set(a.timeline.frame["metric"])
