"""Tests of the learning-signal rule on verl consoles: advantages at zero or spread.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import forensics


def _verl_console(folder, steps, score, advantage):
    folder.mkdir()
    lines = [f"step:{s} - actor/entropy:{0.5 + s / 2:.3f} - actor/pg_loss:{0.0 if advantage(s) == 0 else 0.05} - "
             f"actor/grad_norm:{0.01 if advantage(s) == 0 else 0.8} - actor/lr:3e-05 - critic/score/mean:{score(s)} - "
             f"critic/advantages/max:{advantage(s)} - critic/advantages/min:{-advantage(s)} - "
             f"response_length/mean:{300 + s}" for s in steps]
    (folder / "train.out").write_text("\n".join(lines) + "\n")
    return folder


def test_verl_advantages_at_zero_on_every_step_are_no_learning_signal(tmp_path):
    """Foo1szz's verl GRPO: critic/score/mean 0 on 20 of 21 steps, so every group's completions scored alike and
    verl's batch advantages are 0 at both ends; the policy had nothing to learn from (its entropy then ran to near
    ln(vocabulary)). The tool named the one real update's grad_norm a spike."""
    run = _verl_console(tmp_path / "run", range(1, 22), lambda s: 0.25 if s == 2 else 0.0,
                        lambda s: 1.1 if s == 2 else 0.0)
    a = forensics.analyze(run)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "no_learning_signal", 1), a.findings
    # the cause is the rewards' want of spread, not masked labels (the advice 'check labels and masks' is an SFT's)
    assert [c.cause for c in a.causes][:1] == ["no_reward_spread"], [c.title for c in a.causes]


def test_verl_advantages_that_spread_are_a_learning_signal(tmp_path):
    run = _verl_console(tmp_path / "run", range(1, 22), lambda s: round(0.2 + s / 50, 3), lambda s: 1.3)
    assert not any(f.kind == "no_learning_signal" for f in forensics.analyze(run).findings)
