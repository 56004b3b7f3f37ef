"""A GRPO log of only two steps, each with no reward group that scored its completions apart and grad_norm exactly 0,
is a run with no learning signal (broken), not too short to judge.

Each logged step is a whole batch of groups: TRL's `frac_reward_zero_std` 1.0 says no group had a spread, so every
advantage is 0, and grad_norm 0.0 says no update was made. Two such steps are enough. The rule does not fire where some
groups scored apart (frac_reward_zero_std under 1) or where the gradient was not 0 (a KL term, live groups).
"""
from __future__ import annotations

import json

import forensics


def _grpo_step(step: int, frac_zero_std: float, grad_norm: float, reward: float, reward_std: float) -> dict:
    """One `log_history` entry as TRL's GRPOTrainer writes it (a subset of its keys, in its spelling)."""
    return {"loss": 0.0, "grad_norm": grad_norm, "learning_rate": 2e-06 * (step - 1), "num_tokens": 5120.0 * step,
            "completions/mean_length": 2048.0, "completions/clipped_ratio": 1.0,
            "rewards/reward_function/mean": reward, "rewards/reward_function/std": reward_std,
            "reward": reward, "reward_std": reward_std, "frac_reward_zero_std": frac_zero_std,
            "entropy": 0.2, "epoch": step / 3, "step": step}


def _write_state(folder, history: list[dict]) -> None:
    state = {"global_step": history[-1]["step"], "max_steps": 100, "num_train_epochs": 34, "logging_steps": 1,
             "log_history": history, "is_world_process_zero": True, "trial_name": None}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def test_two_grpo_steps_without_spread_or_gradient_are_no_learning_signal(tmp_path):
    _write_state(tmp_path, [_grpo_step(1, 1.0, 0.0, -2.0, 0.0), _grpo_step(2, 1.0, 0.0, -2.0, 0.0)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("no_learning_signal", 1)


def test_two_grpo_steps_with_some_groups_apart_are_not_no_learning_signal(tmp_path):
    # a quarter of the groups scored apart and the policy moved: a short log, not a dead one
    _write_state(tmp_path, [_grpo_step(1, 0.75, 0.08, -1.6, 0.4), _grpo_step(2, 0.75, 0.11, -1.4, 0.5)])
    analysis = forensics.analyze(tmp_path)
    assert analysis.status != "broken"
    assert not any(f.kind == "no_learning_signal" for f in analysis.findings)


def test_two_grpo_steps_without_spread_but_a_gradient_are_not_no_learning_signal(tmp_path):
    # every group alike, yet a gradient (a KL term): two steps do not settle it
    _write_state(tmp_path, [_grpo_step(1, 1.0, 0.02, -2.0, 0.0), _grpo_step(2, 1.0, 0.03, -2.0, 0.0)])
    analysis = forensics.analyze(tmp_path)
    assert not any(f.kind == "no_learning_signal" for f in analysis.findings)


def _mostly_dead_history(live_reward: float) -> list[dict]:
    """72 GRPO steps of one group each: no spread (reward 0.0) at 62, a spread at the other ten (14%, over
    dead_reward.LIVE_SHARE) with the step's reward `live_reward` there (aryan-gupta7's level 3: -0.125 = one of eight
    completions penalised at -1)."""
    live = {4, 6, 8, 11, 13, 14, 25, 27, 55, 67}
    return [_grpo_step(s, 0.0, 0.2, live_reward, 0.35) if s in live else _grpo_step(s, 1.0, 1e-4, 0.0, 0.0)
            for s in range(1, 73)]


def test_grpo_groups_apart_only_by_a_penalised_completion_never_above_the_stuck_reward_are_no_learning_signal(tmp_path):
    _write_state(tmp_path, _mostly_dead_history(-0.125))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("no_learning_signal", 1)


def test_grpo_groups_apart_by_a_completion_scoring_above_the_stuck_reward_are_not_no_learning_signal(tmp_path):
    # the same share of live groups, each with a completion that earned the reward: a weak signal, not none
    _write_state(tmp_path, _mostly_dead_history(0.125))
    analysis = forensics.analyze(tmp_path)
    assert not any(f.kind == "no_learning_signal" for f in analysis.findings)
