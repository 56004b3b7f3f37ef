"""Tests of the run profile: nanoGPT from scratch is full pre-training.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.console_files import _mlx_console


# ---- change 7: a console saying it builds its model from scratch ----------------------------------------------------------


def test_nanogpt_initializing_a_new_model_from_scratch_is_full_pretraining(tmp_path):
    rows = ["Initializing a new model from scratch", "number of parameters: 10.65M"]
    rows += [f"iter {10 * i}: loss {4.17 - 0.1 * i:.4f}, time 30.12ms, mfu 12.30%" for i in range(30)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile
    assert (profile.objective, profile.method) == ("pretrain", "full")


def test_a_resumed_or_pretrained_start_is_not_from_scratch(tmp_path):
    rows = ["Initializing from OpenAI GPT-2 weights: gpt2", "we train the new model from scratch? no, from gpt2"]
    rows += [f"iter {10 * i}: loss {3.2 - 0.02 * i:.4f}, time 30.12ms, mfu 12.30%" for i in range(30)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", [], rows)).run_profile.objective != "pretrain"
