"""Tests of the no-reward-rise message: quarters' means compared.

From review day 8 (batch AO): each test fails on the code before its change; each change also has a test where
its rule must not fire. Folder names here avoid the words the profile reads in a run's names."""
from __future__ import annotations

import json

import forensics


# ---- change 6: learning_evidence, the no-reward-rise message compares the first and last quarters' means ---------


def _grpo_state(folder, reward):
    import numpy as np
    rng = np.random.default_rng(3)
    rows = [{"step": s, "epoch": s / 1000, "loss": round(float(0.005 + rng.normal(0, 0.001)), 5),
             "reward": float(r), "reward_std": 2.0, "kl": round(float(0.1 + rng.normal(0, 0.02)), 4),
             "completion_length": 1700.0, "learning_rate": 5e-6} for s, r in enumerate(reward, 1)]
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(rows), "log_history": rows}))
    return folder


def _noisy_reward(seed, drift):
    """A GRPO reward of four completions a prompt: mostly the floor -7.5 or partial credit, now and then a solved
    prompt (+13), the share of floors growing by `drift` over the run; the first step at the floor."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for i in range(100):
        p_floor = 0.3 + drift * i / 100
        out.append(-7.5 if i == 0 or rng.random() < p_floor else float(rng.choice([-3.5, -0.375, 2.75, 8.875, 13.0])))
    return out


def test_the_no_reward_rise_message_compares_the_first_quarters_mean_with_the_last_quarters(tmp_path):
    import re
    import numpy as np
    reward = _noisy_reward(5, 0.15)
    finding = next(f for f in forensics.analyze(_grpo_state(tmp_path / "run", reward)).findings
                   if f.kind == "no_learning_evidence")
    first, last = float(np.mean(reward[:25])), float(np.mean(reward[-25:]))
    said = [float(x) for x in re.findall(r"averaged (-?[\d.]+) over the first 25 logged points and (-?[\d.]+) over "
                                          r"the last 25", finding.message)[0]]
    assert np.allclose(said, [first, last], atol=0.01)
    assert (said[1] < said[0]) == (last < first)


def test_a_reward_that_clearly_rises_gets_no_such_message(tmp_path):
    reward = [-7.5 + 15 * i / 99 for i in range(100)]
    findings = forensics.analyze(_grpo_state(tmp_path / "run", reward)).findings
    assert not any(f.kind == "no_learning_evidence" for f in findings)
