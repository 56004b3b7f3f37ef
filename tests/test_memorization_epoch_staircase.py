"""Tests of the memorization rule: a loss halving at each epoch start, a staircase.

From day 9's third pass over spikes, memorization and profiles the tool got wrong on real runs."""
from __future__ import annotations

import json
import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (2) a loss halving at every epoch boundary, many-fold down over the passes, no eval: memorization ------------


def _trainer_state(folder, pass_levels, per_epoch=100, last_points=None):
    """An HF Trainer checkpoint's trainer_state.json logging every step ({'epoch', 'learning_rate', 'loss', 'step'}),
    no grad_norm, no eval: the loss flat within each epoch at `pass_levels[k]` (per-step noise around it), stepping
    down at each epoch boundary; the last epoch cut off after `last_points` steps where given."""
    history, step = [], 0
    n = per_epoch * (len(pass_levels) - 1) + (last_points or per_epoch)
    for step in range(1, n + 1):
        level = pass_levels[min((step - 1) // per_epoch, len(pass_levels) - 1)]
        history.append({"epoch": round(step / per_epoch, 4), "learning_rate": 2e-5 * (1 - step / (n + 1)),
                        "loss": round(level * (1 + 0.12 * math.sin(step * 1.7)), 4), "step": step})
    state = {"epoch": n / per_epoch, "global_step": n, "log_history": history, "logging_steps": 1,
             "max_steps": per_epoch * len(pass_levels), "num_train_epochs": len(pass_levels)}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def test_a_loss_halving_at_each_epoch_start_many_fold_down_to_a_fifth_of_a_nat_is_memorization(tmp_path):
    _trainer_state(tmp_path, [1.46, 1.13, 0.73, 0.39, 0.19, 0.105], last_points=15)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization", [f.message for f in a.findings]
    assert 400 <= a.first_incident.step <= 401, a.first_incident.message  # where the fifth pass (0.19) starts


def test_a_staircase_that_fell_a_few_fold_over_its_passes_is_a_task_learned_not_memorized(tmp_path):
    _trainer_state(tmp_path, [0.49, 0.30, 0.17, 0.115])
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "memorization"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]
