"""Tests of a hand-written RL loop's reward lines and its zero loss.

From the judging rules mended after the fifth day's corpus batches: each test stands for a real run of
tests/realworld named in its docstring."""
from __future__ import annotations

import forensics


def test_a_hand_written_rl_loops_reward_is_read_and_its_zero_loss_is_no_masked_labels(tmp_path):
    """Hosh1mi's GRPO loop (tests/realworld): `step=N loss=0.000000 reward=0.0000 format_reward=... correct=0/2` lines.
    The loss of a group-normalised objective is 0 by construction; the tool read only the loss and called the run
    broken ("labels all masked?"). Right: the reward is read and judged (it never rose: a warning), the objective is RL
    with no trainer's names to say TRL, and its algorithm only from the file's own name."""
    run = tmp_path / "run"
    run.mkdir()
    lines = ["__main__ - INFO - Loaded 3385 GRPO samples"]
    lines += [f"__main__ - INFO - step={s} loss=0.000000 reward={0.5 if s % 11 == 0 else 0.0:.4f} "
              f"format_reward=0.5000 answer_reward=0.0000 correct=0/2 reward_groups=00" for s in range(1, 101)]
    (run / "train.log").write_text("\n".join(lines) + "\n")
    a = forensics.analyze(run)
    assert "reward" in a.timeline.metrics
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence", [f.message for f in a.findings]
    assert "-0" not in a.first_incident.message
    assert (a.run_profile.objective, a.run_profile.algorithm, a.run_profile.framework) == ("rl", None, "unknown")
