"""Tests of analyzers/learning_evidence.py: a first window above the plateau.

From the day-10 review of healthy real runs the tool doubted; each test builds a small log as the real program
writes it."""
from __future__ import annotations

import json
import math

import numpy as np

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (1) a fine-tune whose first logged window holds most of its fall, then a plateau --------------------------------


def _sft_trainer_state(folder, first_loss, first_accuracy, every=10, n=47, seed=3):
    """A TRL SFTTrainer's trainer_state.json logging every `every` steps (each loss the mean over its window): the
    first window at `first_loss` / `first_accuracy`, then a plateau at 0.578 (noise 0.055 a window, as a batch of 8
    gives) with token accuracy 0.84 moving against it."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(n):
        noise = float(rng.normal(0, 0.055))
        loss = first_loss if i == 0 else 0.578 + noise
        accuracy = first_accuracy if i == 0 else 0.84 - 0.2 * noise
        log.append({"loss": round(loss, 4), "grad_norm": 0.45 + 0.05 * math.sin(i), "learning_rate": 2e-4 * (1 - i / n),
                    "entropy": 0.6, "mean_token_accuracy": round(accuracy, 4), "epoch": round(0.02 * (i + 1), 4),
                    "step": every * (i + 1)})
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": every * n,
                                                           "max_steps": 500, "logging_steps": every}))


def test_a_first_window_well_above_a_plateau_with_the_token_accuracy_agreeing_is_evidence_of_learning(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.815)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"], [f.message for f in a.findings]
    assert a.status == "healthy" and a.learning is not None, [f.message for f in a.findings]


def test_a_first_window_within_the_plateau_noise_is_still_no_evidence_of_learning(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.66, first_accuracy=0.815)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]


def test_a_first_window_above_the_plateau_whose_token_accuracy_is_already_at_its_level_is_no_evidence(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.84)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]


def test_a_first_step_above_a_plateau_logged_every_step_is_a_start_up_transient_not_evidence(tmp_path):
    """Logged every step, the first point is one batch on the weights as loaded, not the mean over a window."""
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.815, every=1)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]
