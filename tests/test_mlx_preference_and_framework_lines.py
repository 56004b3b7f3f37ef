"""Tests of the MLX console reader and the profile it gives: preference rewards, ORPO, the
framework.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.console_files import _mlx_console


def _mlx_preference_rows(n: int = 12) -> list[str]:
    """mlx-lm preference trainer step lines (ml-explore/mlx-lm PR 6): loss falling, chosen reward over rejected."""
    rows = []
    for i in range(1, n + 1):
        loss, chosen, rejected = 0.07 - 0.002 * i, -0.2 + 0.003 * i, -0.22 - 0.004 * i
        rows.append(f"Iter {10 * i}: Train loss {loss:.3f}, Chosen reward {chosen:.3f}, Rejected reward "
                    f"{rejected:.3f}, Accuracy 0.700, Margin {chosen - rejected:.3f}, Learning Rate 1.000e-05, "
                    f"It/sec 0.100, Tokens/sec 63.892, Peak mem 5.276 GB")
    return rows


# ---- change 1: mlx-lm's preference trainers print a chosen and a rejected reward: the pairs' rewards, no RL reward ----


def test_mlx_chosen_and_rejected_rewards_are_read_as_the_pairs_rewards_not_an_rl_reward(tmp_path):
    run = _mlx_console(tmp_path / "run", ["Starting training..., iters: 500"], _mlx_preference_rows())
    analysis = forensics.analyze(run)
    metrics = set(analysis.timeline.metrics)
    assert {"rewards/chosen", "rewards/rejected"} <= metrics and "reward" not in metrics
    assert analysis.run_profile.objective == "preference"
    assert not any(f.kind == "no_learning_evidence" for f in analysis.findings)


def test_a_held_out_chosen_reward_is_an_eval_metric(tmp_path):
    rows = ["Iter 1: Val loss 0.055, Val chosen reward -0.240, Val rejected reward -0.268, Val accuracy 1.000, "
            "Val margin 0.028, Val took 0.645s"] + _mlx_preference_rows()
    analysis = forensics.analyze(_mlx_console(tmp_path / "run", [], rows))
    assert analysis.timeline.series("eval_rewards/chosen").tolist() == [-0.24]
    assert analysis.timeline.series("rewards/chosen").index.min() == 10


def test_a_loop_printing_a_plain_reward_is_still_read_as_rl(tmp_path):
    rows = [f"step {s} | loss {0.5 - 0.01 * s:.3f} | reward {0.1 + 0.02 * s:.3f}" for s in range(1, 31)]
    analysis = forensics.analyze(_mlx_console(tmp_path / "run", [], rows))
    assert "reward" in analysis.timeline.metrics and analysis.run_profile.objective == "rl"


# ---- change 2: mlx-lm's start line names what it trains; its step lines name the framework ----------------------


def test_mlx_start_line_naming_orpo_makes_the_objective_preference_orpo(tmp_path):
    run = _mlx_console(tmp_path / "run", ["Starting ORPO training..., iters: 500"], _mlx_preference_rows())
    profile = forensics.analyze(run).run_profile
    assert (profile.objective, profile.algorithm, profile.framework) == ("preference", "orpo", "mlx")


def test_mlx_step_lines_alone_name_the_framework_mlx(tmp_path):
    rows = [f"Iter {10 * i}: Train loss {2.4 - 0.05 * i:.3f}, Learning Rate 1.000e-05, It/sec 3.374, "
            f"Tokens/sec 875.431, Trained Tokens {2595 * i}, Peak mem 5.258 GB" for i in range(1, 21)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile
    assert profile.framework == "mlx" and profile.objective == "unknown"


def test_iter_lines_of_another_loop_do_not_name_mlx(tmp_path):
    rows = [f"Iter {10 * i}: Train loss {2.4 - 0.05 * i:.3f}, lr 1e-05, time 0.3s" for i in range(1, 21)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile.framework != "mlx"
