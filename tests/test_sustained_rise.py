"""A training loss that steps up clearly, short of many-fold, and stays up to the end: a `divergence` warning.

Runs are written as TRL/Unsloth SFT runs leave them (trainer_state.json, a loss every step, a linear schedule with a
short warm-up), on one pass over fresh batches: seeded per-batch noise of about 0.18 around a level. A loss that
holds about 1.7 for 250 steps and then steps up to about 2.1 to step 600 made the model fit its own data worse (a
warning from the step; the many-fold rise stays an error). A loss that falls and settles, one that steps up at a new
epoch and comes back down, one that steps up at a restart of the schedule, and a loss that only wanders are not this.
"""
from __future__ import annotations

import json

import numpy as np

import forensics

STEPS = 600
NOISE = 0.18


def _linear(step: int, start: int = 0, total: int = STEPS) -> float:
    done = step - start
    return 2e-4 * done / 5 if done < 5 else 2e-4 * max(0.0, (total - step) / (total - start - 5))


def _run(tmp_path, levels, rates=None, seed=0):
    rng = np.random.default_rng(seed)
    run = tmp_path / "outputs" / f"checkpoint-{STEPS}"
    run.mkdir(parents=True)
    rates = rates or [_linear(s) for s in range(1, STEPS + 1)]
    history = [{"epoch": round(s / STEPS, 4), "grad_norm": float(0.4 + 0.05 * rng.standard_normal()),
                "learning_rate": rates[s - 1], "loss": round(float(levels[s - 1] + NOISE * rng.standard_normal()), 4),
                "step": s} for s in range(1, STEPS + 1)]
    state = {"global_step": STEPS, "max_steps": STEPS, "logging_steps": 1, "num_train_epochs": 1,
             "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    return run


def _flat_then(step_at: int, before: float, after: float) -> list[float]:
    return [before if s < step_at else after for s in range(1, STEPS + 1)]


def _falling() -> list[float]:
    return [1.45 + 1.1 * np.exp(-s / 60) for s in range(1, STEPS + 1)]


def _divergence(a):
    return [f for f in a.findings if f.kind == "divergence"]


def test_a_loss_that_steps_up_a_quarter_and_stays_up_warns_divergence_at_the_step(tmp_path):
    a = forensics.analyze(_run(tmp_path, _flat_then(251, 1.7, 2.1)))
    found = _divergence(a)
    assert [(f.severity, abs(f.step - 251) <= 15) for f in found] == [("warning", True)]
    assert a.status == "warning" and a.first_incident.kind == "divergence"


def test_a_many_fold_rise_stays_a_divergence_error(tmp_path):
    a = forensics.analyze(_run(tmp_path, _flat_then(251, 1.7, 4.0)))
    assert [f.severity for f in _divergence(a)] == ["error"]


def test_a_falling_then_settled_loss_has_no_divergence(tmp_path):
    for seed in range(3):
        folder = tmp_path / str(seed)
        folder.mkdir()
        assert _divergence(forensics.analyze(_run(folder, _falling(), seed=seed))) == []


def test_a_step_up_that_comes_back_down_is_not_a_divergence(tmp_path):
    # a new epoch's harder batches: up 0.4 for 60 steps, then back to the level
    levels = [2.1 if 301 <= s <= 360 else 1.7 for s in range(1, STEPS + 1)]
    assert _divergence(forensics.analyze(_run(tmp_path, levels))) == []


def test_a_step_up_at_a_restart_of_the_schedule_is_a_new_phase(tmp_path):
    rates = [_linear(s, 0, 300) if s <= 300 else _linear(s, 300) for s in range(1, STEPS + 1)]
    a = forensics.analyze(_run(tmp_path, _flat_then(301, 1.7, 2.1), rates=rates))
    assert _divergence(a) == []


def test_a_loss_wandering_within_its_noise_has_no_divergence(tmp_path):
    levels = [1.7 + 0.04 * np.sin(s / 40) for s in range(1, STEPS + 1)]
    assert _divergence(forensics.analyze(_run(tmp_path, levels))) == []
