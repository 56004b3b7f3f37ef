"""Tests of analyzers/overfitting.py without a training loss.

From review day 9, judge second pass (batches AQ4 and AQ5): each test fails on the code before its change; each
change also has a test where its rule must not fire. Folder names avoid the words the profile reads in names."""
from __future__ import annotations

import json

import forensics


# ---- change 3: an eval loss climbing eval after eval past its best is overfitting even with no training loss logged --


def _eval_only_state(folder, evals: list[float]):
    """A Trainer checkpoint whose logging_steps exceed the run's length: trainer_state.json holds the per-epoch
    evaluations and no training loss (one step an epoch)."""
    history = [{"epoch": float(i), "eval_loss": v, "eval_runtime": 0.3412, "eval_samples_per_second": 2.931,
                "eval_steps_per_second": 2.931, "step": i} for i, v in enumerate(evals, 1)]
    n = len(evals) + 1
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": float(n), "eval_steps": 500,
             "global_step": n, "is_hyper_param_search": False, "is_local_process_zero": True,
             "is_world_process_zero": True, "log_history": history, "logging_steps": 500, "max_steps": n,
             "num_input_tokens_seen": 0, "num_train_epochs": n, "save_steps": 500, "total_flos": 5418319134720.0,
             "train_batch_size": 8, "trial_name": None, "trial_params": None}
    checkpoint = folder / f"checkpoint-{n}"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return folder


def test_eval_loss_climbing_after_its_best_without_a_training_loss_is_overfitting(tmp_path):
    run = _eval_only_state(tmp_path / "run", [0.4163, 0.368, 0.2971, 0.2606, 0.2587, 0.2703, 0.2911, 0.3075, 0.3164])
    analysis = forensics.analyze(run)
    assert analysis.status == "warning"
    over = analysis.first_incident
    assert (over.kind, over.step) == ("overfitting", 6)
    assert "training loss is not logged" in over.message


def test_eval_loss_wandering_or_climbing_briefly_without_a_training_loss_is_no_overfitting(tmp_path):
    wandering = [2.42, 2.30, 2.21, 2.15, 2.11, 2.13, 2.12, 2.14, 2.13, 2.15]  # above its best, not climbing each eval
    three = [0.4163, 0.368, 0.2971, 0.2606, 0.2587, 0.2451, 0.2503, 0.2611, 0.2720]  # three evals climbing only
    for name, evals in (("wandering", wandering), ("three", three)):
        analysis = forensics.analyze(_eval_only_state(tmp_path / name, evals))
        assert not any(f.kind == "overfitting" for f in analysis.findings), name
