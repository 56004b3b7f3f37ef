"""DSPy's GRPO optimizer log (langwatch_cookbooks: dspy.teleprompt.grpo with an Arbor server): each `GRPO training step
N/M...` line and the `Average Metric: X / N` of the step's rollouts scored before its `completed` line is the step's
mean reward; a step whose rollouts all scored 0 had no reward spread."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics

CORPUS = Path(__file__).parent / "realworld"
_AT = "2025/05/07 15:56:17 INFO "


def _log(scores: list[float], rollouts: int = 4, total: int = 50) -> str:
    lines = [f"{_AT}dspy.evaluate.evaluate: Average Metric: 0.0 / 50 (0.0%)",  # the validation before the loop
             f"{_AT}dspy.teleprompt.grpo: Student program validation set score before training loop: 0.0",
             f"{_AT}dspy.teleprompt.grpo: Starting the GRPO training loop..."]
    for n, score in enumerate(scores, start=1):
        lines += [f"{_AT}dspy.teleprompt.grpo: GRPO training step {n}/{total}...",
                  f"{_AT}dspy.teleprompt.grpo: Bootstrapping data...",
                  f"Average Metric: {score:.2f} / {rollouts} ({100 * score / rollouts:.1f}%): 100%|##| 4/4 "
                  "[00:05<00:00,  1.33s/it]",
                  f"{_AT}dspy.evaluate.evaluate: Average Metric: {score} / {rollouts} ({100 * score / rollouts:.1f}%)",
                  f"{_AT}dspy.teleprompt.grpo: Invoking GRPO training step...",
                  f"{_AT}dspy.teleprompt.grpo: GRPO training step {n}/{total} completed."]
    return "\n".join(lines) + "\n"


def test_each_grpo_step_gives_its_rollouts_mean_reward(tmp_path):
    (tmp_path / "output.log").write_text(_log([0.0, 1.0, 2.0, 0.0, 3.0]))
    frame = forensics.load_timeline(tmp_path).frame
    reward = frame[frame["metric"] == "reward"].sort_values("step")
    assert list(reward["step"]) == [1, 2, 3, 4, 5]  # the validation before the loop is no step
    assert list(reward["value"]) == pytest.approx([0.0, 0.25, 0.5, 0.0, 0.75])
    spread = frame[frame["metric"] == "step_reward_std"]
    assert sorted(spread["step"]) == [1, 4]  # said only where every rollout scored 0


def test_grpo_steps_whose_rollouts_all_scored_zero_are_no_learning_signal(tmp_path):
    (tmp_path / "output.log").write_text(_log([0.0, 0.0, 0.0, 0.0, 2.0, 0.0]))
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 1)


def test_grpo_steps_whose_rollouts_scored_apart_give_no_such_alarm(tmp_path):
    (tmp_path / "output.log").write_text(_log([1.0, 2.0, 1.0, 2.0, 3.0, 2.0]))
    a = forensics.analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "no_learning_signal"]


def test_the_corpus_dspy_grpo_run_is_broken_with_no_learning_signal_and_a_lora_rl_profile():
    a = forensics.analyze(CORPUS / "langwatch_cookbooks")
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 1)
    assert (a.run_profile.method, a.run_profile.objective) == ("lora", "rl")
