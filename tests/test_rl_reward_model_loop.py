"""Tests of a reward-model loop printing its mean score as `reward`: no RL run.

From review day 5c (misreads of the second set of rules added on day 5): each test says which change it targets
and fails on the code before its fix."""
from __future__ import annotations

import json

import numpy as np

import forensics


# ---- change 4: pretrain_lines.py / profile.py, a bare `reward` says RL -------------------------------------------


def test_a_reward_model_loop_that_prints_its_mean_score_as_reward_is_no_rl_run(tmp_path):
    """Change 4. A hand-written reward-model training loop (config.json: LlamaForSequenceClassification with one
    label) printing `step=N loss=... acc=... reward=...`, its `reward` the mean score the model gives the chosen
    answers (a scale with no goal); the pairwise loss falls from ln 2 (0.68) to 0.35 and the pair accuracy rises from
    0.5 to 0.84. The bare `reward` is now read and returns objective "rl" before the one-label head at ln 2 is
    looked at: the tool says objective rl and warns no_learning_evidence ("the reward did not rise ... nothing shows
    the policy improved"). Without the `reward=` field the same run is a reward model and healthy. Right: objective
    reward, healthy: a reward model's score has no direction to rise in."""
    rng = np.random.default_rng(7)
    run = tmp_path / "run"
    run.mkdir()
    lines = ["__main__ - INFO - Loaded 12000 preference pairs"]
    for s in range(1, 101):
        loss = 0.35 + 0.343 * np.exp(-s / 25) + rng.normal(0, 0.01)
        acc = 0.84 - 0.34 * np.exp(-s / 25) + rng.normal(0, 0.02)
        score = 0.1 * np.sin(s / 7) + rng.normal(0, 0.3)
        lines.append(f"__main__ - INFO - step={s * 10} loss={loss:.4f} acc={acc:.4f} reward={score:.4f}")
    (run / "train.log").write_text("\n".join(lines) + "\n")
    (run / "config.json").write_text(json.dumps({"architectures": ["LlamaForSequenceClassification"],
                                                 "id2label": {"0": "LABEL_0"}, "model_type": "llama"}))
    a = forensics.analyze(run, check_checkpoints=False)
    assert a.run_profile.objective == "reward", a.run_profile.evidence
    assert a.status == "healthy", [f.message for f in a.findings]
