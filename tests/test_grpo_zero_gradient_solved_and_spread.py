"""Tests of the GRPO zero-gradient rules: a solved reward, groups that differ.

From the adversarial review of the rules added on 2026-11-26 (after 14:00): every test FAILS on the code it was
written against (15cf9c0); its docstring names the change it targets."""
from __future__ import annotations

import random

from support.trainer_state_files import _analyze, _trainer_state


# ---- change 4 (detect_rl_gradient_gone) ------------------------------------------------------------------------------


def _grpo_rows(seed, late):
    random.seed(seed)
    rows = []
    for s in range(1, 101):
        rows.append({"step": s, "loss": 0.0, "learning_rate": 1e-6, "completions/mean_length": 180.0,
                     "epoch": s / 100, **late(s)})
    return rows


def test_a_grpo_run_that_solved_its_reward_is_not_broken_when_the_gradient_goes_to_zero(tmp_path):
    """Change 4. TRL GRPO (beta 0, its default since 0.19: no KL gradient), one prompt x 8 completions a step, logged
    every step: the accuracy reward rises 0.3 -> 0.95 over 40 steps; from there 90% of prompts are solved by every
    completion, so those steps' advantages are all 0 and grad_norm is exactly 0 (55 of the last 60 points; the other 5
    are groups that still differ, reward 0.5-0.875, grad_norm 0.3). Before the change the tool said warning,
    reward_saturated at 41 ("The policy learned to earn this reward ... no spread left"), which is right. Now it says
    broken, no_learning_signal error at 41 ("the policy stopped learning ... a collapsed policy ... restart from a
    checkpoint saved before it"), beside that same reward_saturated finding, and adds the cause zero_loss_zero_grad
    ("Check labels and masks: every label -100"). A policy at the reward's top is usable and its run learned; the
    advice would throw the trained policy away. Right: warning, first incident reward_saturated, no error."""
    def late(s):
        if s <= 40:
            return {"reward": 0.3 + 0.65 * s / 40 + random.uniform(-0.05, 0.05), "grad_norm": 0.4 + random.uniform(0, 0.3),
                    "reward_std": 0.3, "frac_reward_zero_std": 0.2 + 0.6 * s / 40}
        solved = random.random() < 0.9
        reward = 1.0 if solved else random.choice([0.5, 0.625, 0.75, 0.875])
        return {"reward": reward, "rewards/accuracy_reward/mean": reward, "grad_norm": 0.0 if solved else 0.3,
                "reward_std": 0.0 if solved else 0.3, "frac_reward_zero_std": 1.0 if solved else 0.0}
    a = _analyze(_trainer_state(tmp_path / "run", _grpo_rows(0, late)))
    assert a.status == "warning", [(f.kind, f.severity, f.step) for f in a.findings]
    assert a.first_incident.kind == "reward_saturated"
    assert "zero_loss_zero_grad" not in {c.cause for c in a.causes}


def test_a_zero_grad_norm_beside_groups_that_differ_is_not_read_as_every_advantage_zero(tmp_path):
    """Change 4. A GRPO run resumed at step 41 under a DeepSpeed ZeRO-3 release that logs grad_norm as 0.0: grad_norm
    0.5-0.8 to step 40, exactly 0 at every point after; the reward flat at about 0.6 throughout (a plateau), with
    frac_reward_zero_std 0.1 and reward_std 0.35 logged at every step: 90% of the groups scored their completions
    differently, so the advantages were not 0 and a GRPO gradient cannot be exactly 0 (the logged norm is what is
    wrong). The tool says broken, no_learning_signal error at 41: "a zero gradient means every advantage was 0, each
    group's completions scored alike", which the run's own frac_reward_zero_std contradicts (and adds the cause
    "Check labels and masks: every label -100"). Before the change: warning (no_learning_evidence, reward_decline).
    Right: no no_learning_signal error read from a zero grad_norm the reward spread contradicts."""
    def late(s):
        return {"reward": 0.62 + random.uniform(-0.08, 0.08), "reward_std": 0.35, "frac_reward_zero_std": 0.1,
                "grad_norm": 0.5 + random.uniform(0, 0.3) if s <= 40 else 0.0}
    a = _analyze(_trainer_state(tmp_path / "run", _grpo_rows(1, late)))
    assert not [f for f in a.findings if f.kind == "no_learning_signal" and f.severity == "error"], \
        [(f.kind, f.severity, f.step, f.message[:120]) for f in a.findings]
