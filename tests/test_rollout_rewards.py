"""A hand-written RL loop's JSON-lines log: its mean reward and loss named for how they were taken (`avg_reward`,
`avg_loss`), each record with the group of completions it sampled and their rewards (forensics/ingest/taken_names.py,
read through jsonl).

From corpus batch AS119 (WFJKK_vlm-spatial-bottleneck: a custom GRPO loop on Qwen2.5-VL)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics
from forensics.ingest import jsonl
from forensics.metric_names import is_taken_reward

CASE = Path(__file__).parent / "realworld" / "WFJKK_vlm-spatial-bottleneck"


def _rewards(n: int) -> list[float]:
    """A reward rising from about -0.6 to about -0.15, with a noise of +-0.1 a record."""
    return [-0.6 + 0.45 * i / (n - 1) + 0.1 * math.sin(1.7 * i) for i in range(n)]


def _loop_log(path: Path, with_group: bool = True, n: int = 60) -> Path:
    lines = []
    for i, reward in enumerate(_rewards(n)):
        record = {"step": 5 * (i + 1), "epoch": 0, "avg_reward": round(reward, 4), "best_reward": round(reward / 4, 4),
                  "avg_loss": round(0.2 * math.sin(2.3 * i), 4)}
        if with_group:
            record |= {"completions": ["15", "20", "15", "12"], "rewards": [reward, reward - 0.1, reward, reward + 0.1]}
        lines.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_reward_named_for_how_it_was_taken():
    assert [is_taken_reward(n) for n in ("avg_reward", "mean_reward", "running_reward", "batch_reward")] == [True] * 4
    # the best of a group, a part of the reward, a held-out one, a spread: not the policy's mean reward
    assert [is_taken_reward(n) for n in ("best_reward", "avg_format_reward", "val_avg_reward", "avg_reward_std")] \
        == [False] * 4
    # a term named with its average after it (review 31c): `format_avg_reward`, `correctness_mean_reward`
    assert not is_taken_reward("format_avg_reward") and not is_taken_reward("correctness_mean_reward")
    assert is_taken_reward("train_avg_reward")


def test_a_loops_records_with_their_sampled_group_read_its_mean_reward_and_loss(tmp_path):
    frame = jsonl.read(_loop_log(tmp_path / "checkpoints" / "training_log.jsonl")).frame
    assert {"reward", "loss", "best_reward"} <= set(frame["metric"])
    assert "avg_reward" not in set(frame["metric"])


def test_a_rising_reward_of_such_a_loop_is_a_healthy_rl_run(tmp_path):
    _loop_log(tmp_path / "checkpoints" / "training_log.jsonl")
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "healthy" and analysis.run_profile.objective == "rl"


def test_a_mean_reward_without_a_sampled_group_is_not_taken_for_an_rl_reward(tmp_path):
    # a reward model's trainer logs the mean score its model gives (TRL's RewardTrainer: mean_reward): no group of
    # sampled completions, so nothing says it is a policy's reward
    frame = jsonl.read(_loop_log(tmp_path / "training_log.jsonl", with_group=False)).frame
    assert "reward" not in set(frame["metric"]) and "avg_reward" in set(frame["metric"])


def test_an_average_loss_alone_is_the_loss_of_a_json_lines_log(tmp_path):
    path = tmp_path / "train_log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "avg_loss": 3.0 * 0.97 ** s}) + "\n" for s in range(1, 61)))
    frame = jsonl.read(path).frame
    assert set(frame["metric"]) == {"loss"}
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_held_out_average_loss_is_not_taken_for_the_training_loss(tmp_path):
    path = tmp_path / "train_log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "val_avg_loss": 2.0}) + "\n" for s in range(1, 11)))
    assert "loss" not in set(jsonl.read(path).frame["metric"])


def test_the_corpus_case_is_a_healthy_rl_run():
    analysis = forensics.analyze(CASE)
    assert analysis.status == "healthy" and analysis.first_incident is None
    assert analysis.run_profile.objective == "rl"
