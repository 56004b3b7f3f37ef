"""The run profile of a small-vocabulary model from random weights (forensics/profile): method full, objective pretrain.

A first loss at ln(a few hundred tokens) - 5.5 to 9 nats, under the ln 8k floor of a tokenizer's guess - that then falls
gradually is a model learning from random weights. The fall asked of it is 40%; where the log starts at step 0 (the
untrained model's own loss) a third will do, as real small from-scratch LMs fall over a short log (msh2481_DenseGPT:
ln 500 = 6.22 -> 4.13 in 14 points; TimNiklasWitte_Building-GPT-from-scratch: 7.14 -> 4.65 over 101). The same curve
first logged after some updates, or falling less, says nothing (the profile stays unknown).

Run-profile misses across the corpus (fx-profile5)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics


# msh2481_DenseGPT's shape: ln 500 at the first logged step, a third lower 14 points later, never a quick halving
A_THIRD_LOWER = [6.22, 6.21, 6.21, 6.05, 5.8, 5.55, 5.3, 5.05, 4.85, 4.6, 4.45, 4.3, 4.2, 4.13]
# the same start falling a sixth: no evidence of random weights
A_SIXTH_LOWER = [6.22, 6.21, 6.2, 6.1, 6.0, 5.9, 5.8, 5.7, 5.6, 5.5, 5.4, 5.3, 5.25, 5.2]


def _trainer_state_run(tmp_path: Path, losses: list[float], first_step: int = 0) -> Path:
    run = tmp_path / "checkpoint-1400"
    run.mkdir()
    history = [{"step": first_step + 100 * i, "epoch": round((i + 1) / len(losses), 3), "loss": v, "grad_norm": 1.0,
                "learning_rate": 3e-4} for i, v in enumerate(losses)]
    state = {"global_step": 100 * len(losses), "max_steps": 100 * len(losses), "num_train_epochs": 1,
             "logging_steps": 100, "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    return run


def test_a_small_vocabulary_loss_falling_a_third_from_its_guess_is_a_full_pretraining(tmp_path):
    profile = forensics.analyze(_trainer_state_run(tmp_path, A_THIRD_LOWER)).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")
    assert "6.22" in profile.evidence["objective"]


def test_a_small_vocabulary_loss_falling_a_sixth_leaves_method_and_objective_unknown(tmp_path):
    profile = forensics.analyze(_trainer_state_run(tmp_path, A_SIXTH_LOWER)).run_profile
    assert (profile.method, profile.objective) == ("unknown", "unknown")


def test_the_same_third_first_logged_after_updates_leaves_method_and_objective_unknown(tmp_path):
    """(nwyin_modded-llama2_issue10 is judged unknown from a first point at step 40; XTuner's LLaVA pre-training stage
    with its LLM frozen, tests/test_profile_console.py, from Iter 10)"""
    profile = forensics.analyze(_trainer_state_run(tmp_path, A_THIRD_LOWER, first_step=100)).run_profile
    assert (profile.method, profile.objective) == ("unknown", "unknown")


@pytest.mark.parametrize("case", ["msh2481_DenseGPT", "TimNiklasWitte_Building-GPT-from-scratch"])
def test_the_real_small_from_scratch_lms_are_profiled_full_pretraining(case):
    profile = forensics.analyze(Path(__file__).parent / "realworld" / case).run_profile
    assert (profile.method, profile.objective) == ("full", "pretrain")
