"""Tests of analyzers/divergence.py on DPO / IPO losses that rise and settle.

From the adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch). A failing test was a
misfire; passing tests record shapes that held."""
from __future__ import annotations

import json

import numpy as np

from support.notebook_and_findings import _analyze, _kinds


# ---- (3) a pairwise loss that blew up --------------------------------------------------------------------------------


def _dpo_state(folder, values):
    folder.mkdir(parents=True, exist_ok=True)
    n = len(values)
    hist = [{"loss": round(float(v), 4), "rewards/chosen": 0.1, "rewards/rejected": -0.1, "rewards/accuracies": 0.6,
             "rewards/margins": 0.2, "logps/chosen": -100.0, "logps/rejected": -110.0, "grad_norm": 5.0,
             "learning_rate": 5e-7, "epoch": (i + 1) / n * 3, "step": 10 * (i + 1)} for i, v in enumerate(values)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": hist, "global_step": 10 * n}))
    return folder


def test_a_dpo_loss_that_rises_mildly_and_recovers_is_no_divergence(tmp_path):
    v = np.concatenate([np.linspace(0.69, 0.3, 30), np.linspace(0.3, 1.1, 10), np.linspace(1.1, 0.35, 20)])
    a = _analyze(_dpo_state(tmp_path, v))
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)


def test_a_dpo_loss_whose_last_epochs_overfit_held(tmp_path):
    """Three epochs: the loss falls in each epoch and the last points are low: nothing to say."""
    v = np.concatenate([np.linspace(0.69, 0.5, 20), np.linspace(0.45, 0.2, 20), np.linspace(0.15, 0.05, 20)])
    a = _analyze(_dpo_state(tmp_path, v))
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)


def test_an_ipo_loss_starting_near_ln2_by_its_beta_that_rises_and_settles_is_no_divergence(tmp_path):
    """TRL IPO (loss_type='ipo', beta=0.6): (margin - 1/(2 beta))^2 starts at 1/(4 beta^2) = 0.694, near ln 2 by
    chance; its margins overshoot the target and the squared loss settles above 1.04 while the pairs are ranked right
    (rewards/accuracies 0.9). The tool says broken / divergence ('the policy now ranks the rejected answers far
    above'), which is false for a squared loss. Fix: forensics/analyzers/divergence.py:_pairwise_blow_up (judge only
    where the log's own pair accuracy / margins say the pairs went the wrong way, or the loss type is sigmoid)."""
    v = np.concatenate([np.linspace(0.694, 0.4, 15), np.linspace(0.4, 1.3, 15), np.full(30, 1.3)])
    folder = _dpo_state(tmp_path, v)
    state = json.loads((folder / "trainer_state.json").read_text())
    for h in state["log_history"]:
        h["rewards/accuracies"], h["rewards/margins"] = 0.9, 2.5
    (folder / "trainer_state.json").write_text(json.dumps(state))
    a = _analyze(folder)
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)
