"""Tests of the run profile's objective: a TRL CPO log, an ORPO log.

From the adversarial review of b03625a..HEAD (notebook from-scratch / fp32 rules, pairwise epochs, ORPO keys).
A failing test was a misfire; passing tests record shapes that held."""
from __future__ import annotations

import json

import forensics


def _profile(folder):
    return forensics.analyze(folder, check_checkpoints=False).run_profile


# ---- (4) ORPO / CPO ----------------------------------------------------------------------------------------------------


def test_a_trl_cpo_log_is_not_said_dpo(tmp_path):
    """TRL's CPOTrainer (and SimPO through it, loss_type="simpo") logs nll_loss, rewards/chosen|rejected|accuracies|
    margins, logps/chosen|rejected, logits/* and no log_odds_*; its trainer_state.json alone (no training_args naming
    the trainer). The tool now says preference / dpo (before aaf6071: orpo); a CPO log carries no reference model's
    rewards, and `nll_loss` with `rewards/*` is DPO with rpo_alpha or CPO alike: the algorithm is not known from the
    keys. Fix: forensics/profile.py:_PREFERENCE_ALGOS / _objective (nll_loss with rewards/* and no odds terms: algorithm
    unknown, objective preference)."""
    history = [{"loss": 0.69 - s * 0.001, "nll_loss": 1.9 - s * 0.002, "rewards/chosen": -0.2, "rewards/rejected": -0.3,
                "rewards/accuracies": 0.6, "rewards/margins": 0.1, "logps/rejected": -300.0, "logps/chosen": -290.0,
                "logits/rejected": -1.2, "logits/chosen": -1.1, "grad_norm": 3.0, "learning_rate": 5e-7,
                "epoch": s / 200, "step": s} for s in range(10, 210, 10)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": history, "global_step": 200}))
    p = _profile(tmp_path)
    assert p.objective == "preference"
    assert p.algorithm != "dpo"


def test_an_orpo_log_stays_orpo(tmp_path):
    history = [{"loss": 1.2, "nll_loss": 1.1, "log_odds_ratio": -0.6, "log_odds_chosen": 0.2, "rewards/chosen": -0.1,
                "rewards/rejected": -0.2, "rewards/margins": 0.1, "rewards/accuracies": 0.6, "logps/chosen": -1.0,
                "logps/rejected": -2.0, "epoch": s / 200, "step": s} for s in range(10, 210, 10)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": history, "global_step": 200}))
    assert _profile(tmp_path).algorithm == "orpo"
