"""Tests of analyzers/learning_evidence.py: short logs, a token accuracy that rose.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import math

import forensics
from support.judged_logs import _console, _kinds, _trainer_state


# 2. a loss many times any vocabulary's uniform guess: impossible, and the first thing wrong



# 4. learning evidence: one blip does not set the noise; a token accuracy that rises clearly is evidence

def _titan_lines(losses, first_step=14):
    return [f"[rank0]:[titan] 2026-05-18 10:00:{i:02d},000 - root - INFO - step: {first_step + i:2d}  loss: {v:7.4f}  "
            f"grad_norm:  0.7{i % 10}  memory: 30.12GiB(31.70%)  tps: 6,000  tflops: 300.00  mfu: 30.00%"
            for i, v in enumerate(losses)]


def test_one_blip_in_a_short_log_does_not_hide_its_fall_as_noise(tmp_path):
    """Eight torchtitan steps, 3.244, 3.107, 3.050, 3.145, then one 3.544 that the next step erases, then 3.010,
    2.900, 3.009: the blip alone triples the point-to-point noise (0.16 with it, 0.06 without) and made the fall of
    the others read as noise (no_learning_evidence). Set aside, the fall shows: healthy."""
    a = forensics.analyze(_console(tmp_path / "run", _titan_lines([3.244, 3.107, 3.050, 3.145, 3.544, 3.010, 2.900,
                                                                   3.009])))
    assert a.run_profile.framework == "torchtitan"
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]
    assert a.learning is not None and a.learning.metric == "loss"


def test_a_short_log_that_does_not_fall_still_has_no_learning_evidence(tmp_path):
    """The same eight steps flat around 3.1 with the same one-step blip: setting the blip aside shows no fall, so
    still no evidence it learned."""
    a = forensics.analyze(_console(tmp_path / "run", _titan_lines([3.100, 3.080, 3.120, 3.090, 3.544, 3.110, 3.085,
                                                                   3.105])))
    assert "no_learning_evidence" in _kinds(a)


def _sft_history(accuracy, n=40):
    """TRL SFT log_history every 10 steps: a loss that swings 0.5-0.7 batch to batch with no trend, and the given
    mean_token_accuracy at each point."""
    return [{"step": 10 * (i + 1), "loss": round(0.6 + 0.1 * math.sin(i * 2.3), 4), "grad_norm": 0.5,
             "learning_rate": 2e-4 * (1 - i / n), "entropy": 0.9, "mean_token_accuracy": accuracy(i),
             "num_tokens": 4096.0 * (i + 1), "epoch": round((i + 1) / n, 3)} for i in range(n)]


def test_a_token_accuracy_that_rises_clearly_is_evidence_the_run_learned(tmp_path):
    """A noisy loss with no trend beside a mean_token_accuracy rising 0.60 -> 0.80 with small noise: the share of
    target tokens predicted right went up, the run learned: healthy. Before: no_learning_evidence from the loss."""
    history = _sft_history(lambda i: round(0.6 + 0.2 * i / 39 + 0.005 * math.sin(i * 1.9), 4))
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]
    assert a.learning is not None and a.learning.metric == "mean_token_accuracy"


def test_a_token_accuracy_that_moved_within_its_noise_is_no_evidence(tmp_path):
    """The same loss with a token accuracy at 0.817 at its first point and 0.82-0.86 after, no trend: within its own
    noise, no evidence: still no_learning_evidence."""
    history = _sft_history(lambda i: 0.817 if i == 0 else round(0.84 + 0.015 * math.sin(i * 2.9), 4))
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert "no_learning_evidence" in _kinds(a)
