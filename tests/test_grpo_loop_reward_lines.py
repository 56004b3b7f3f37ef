"""Tests of a hand-written GRPO loop's lines: its RL loss and mean reward.

From the logs the tool did not read, or read wrongly, found on real runs (day 7)."""
from __future__ import annotations

import math

from support.final_series import _analyze, _series


# ---- (2) a hand-written GRPO loop's python-logging lines: `rl_loss: X, ..., l2_norm: G, reward_data: {...}` ----------


def _grpo_log(path, steps, reward_of, record=None):
    """CS336 assignment 5's GRPO loop: `logger.info(f"rl_loss: {loss}, time: {t}, l2_norm: {norm}, token_entropy:
    {h}, reward_data: {reward_data}")` once a GRPO step (no step printed; a `rollout batch N generated` line before
    it, a sampled prompt and the model's output now and then)."""
    stamp = "2025-09-23 09:01:00,984 - train - INFO - "
    lines = []
    for i in range(steps):
        lines.append(f"{stamp}rollout batch {i} generated, length: 256")
        data = record(i) if record else {"total_num": 256, "total_reward": float(round(256 * reward_of(i))),
                                           "total_format_reward": 240.0, "total_answer_reward": 0.0}
        loss = 0.0 if i % 3 else -0.0012 * (1 + i % 2)
        lines.append(f"{stamp}rl_loss: {loss}, time: {110.0 + i % 7}, l2_norm: {0.1 + 0.003 * i}, "
                     f"token_entropy: {0.8 - 0.002 * i}, reward_data: {data}")
        if i % 8 == 0:
            lines += [f"{stamp}prompt: A conversation between User and Assistant. The loss: of nothing.",
                      "Assistant: <think> 2 + 2 = 4 </think> <answer> 4 </answer>",
                      f"{stamp}rollout batch {i} done, eval_acc: {0.48 + 0.001 * i}"]
    path.write_text("\n".join(lines) + "\n")


def test_a_grpo_loops_rl_loss_lines_are_read_with_the_mean_reward(tmp_path):
    """The loop's lines were not read at all (NotARunDirectory): `rl_loss` is the loss (the objective's name), the
    l2_norm the gradient norm, total_reward / total_num the step's mean reward; each line one step, said in a note."""
    _grpo_log(tmp_path / "rl_grpo.log", 60, lambda i: 0.45 + 0.005 * i + 0.03 * ((i * 7) % 5 - 2) / 2)
    a = _analyze(tmp_path)
    loss, reward, norm = _series(a, "loss"), _series(a, "reward"), _series(a, "grad_norm")
    assert sorted(loss) == list(range(1, 61)) and sorted(reward) == list(range(1, 61))
    assert math.isclose(reward[1], round(256 * (0.45 - 0.03)) / 256) and math.isclose(norm[60], 0.1 + 0.003 * 59)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert any("print no step" in s.reason for s in a.skipped if s.note)


def test_a_reward_dict_without_a_total_over_a_count_gives_no_reward(tmp_path):
    """A dict of other counts (`{'correct': 130, 'seen': 256}`) is no mean reward the reader can tell: the loss and
    grad norm are read, no reward is made up."""
    _grpo_log(tmp_path / "rl.log", 30, None, record=lambda i: {"correct": 100 + i, "seen": 256})
    a = _analyze(tmp_path)
    assert len(_series(a, "loss")) == 30 and "reward" not in set(a.timeline.final()["metric"])
