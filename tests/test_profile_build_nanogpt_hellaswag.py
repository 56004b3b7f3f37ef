"""Tests of the run profile of a build-nanogpt log: a HellaSwag eval says pre-training.

From the reading gaps found on real runs (batches AQ7-AQ9)."""
from __future__ import annotations

import forensics


# ---- (2) build-nanogpt's log of a resumed pre-training run ----------------------------------------------------------


def _nanogpt_log(path, first, steps, hella=True):
    """build-nanogpt's train_gpt2.py log file: `N train X` every step, `N val X` and `N hella X` every 250 (the
    HellaSwag accuracy), from a resumed step whose loss is near 3 nats, not ln(50257)."""
    lines = []
    for step in range(first, first + steps):
        if step % 250 == 0 or step == first + steps - 1:
            lines.append(f"{step} val {3.3 - 0.0001 * (step - first):.4f}")
            if hella:
                lines.append(f"{step} hella {0.30 + 0.00001 * (step - first):.4f}")
        lines.append(f"{step} train {3.1 - 0.00005 * (step - first) + 0.05 * ((step * 7) % 5 - 2) / 2:.6f}")
    path.write_text("\n".join(lines) + "\n")


def test_a_resumed_build_nanogpt_log_with_a_hellaswag_eval_is_pretraining(tmp_path):
    """A build-nanogpt log that starts at a resumed step (loss ~3.1, so no ln(vocab) start) with its `hella` eval
    every 250 steps: the HellaSwag benchmark of the nanoGPT-family pre-training loop says pre-training."""
    (tmp_path / "log").mkdir()
    _nanogpt_log(tmp_path / "log" / "log.txt", 19072, 1500)
    profile = forensics.analyze(tmp_path, check_checkpoints=False).run_profile.to_dict()
    assert profile["objective"] == "pretrain"
    assert profile["method"] == "unknown"  # a continuation: the log does not show random weights


def test_the_same_log_without_a_hellaswag_eval_does_not_say_pretraining(tmp_path):
    """The same train/val lines with no `hella` line: nothing in them names the objective."""
    (tmp_path / "log").mkdir()
    _nanogpt_log(tmp_path / "log" / "log.txt", 19072, 1500, hella=False)
    assert forensics.analyze(tmp_path, check_checkpoints=False).run_profile.to_dict()["objective"] == "unknown"
