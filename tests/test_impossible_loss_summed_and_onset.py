"""Tests of the impossible-loss rule: a loss many times the guess, a blow-up's onset, a summed
loss that learns.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import math

import forensics
from support.judged_logs import _console, _kinds


# 2. a loss many times any vocabulary's uniform guess: impossible, and the first thing wrong



def test_a_trainer_loss_many_times_any_vocabularys_guess_is_the_first_incident(tmp_path):
    """HF Trainer dict lines whose loss is 400-2700 for six lines at learning rate 0.0, then 6e7, then 0.0 (the NaN
    filter) and an eval_loss of nan: the Trainer logs a per-token mean, and no vocabulary's uniform guess is above
    about 13 nats, so the first line's loss is impossible and is where it went wrong: broken, first incident
    impossible_loss at line 1, the masked NaN after it put down to it. Before: the start was only a
    start_above_uniform_guess warning and the first incident the masked NaN at line 8."""
    losses = [537.6, 915.8, 1891.6, 425.8, 1528.5, 2697.5]
    lines = [f"{{'loss': {v}, 'learning_rate': 0.0, 'epoch': {0.03 * (i + 1):.2f}}}" for i, v in enumerate(losses)]
    lines.append("{'loss': 61674848.0, 'learning_rate': 3e-06, 'epoch': 0.21}")
    lines += [f"{{'loss': 0.0, 'learning_rate': {3e-6 * (i + 2)}, 'epoch': {0.24 + 0.03 * i:.2f}}}" for i in range(4)]
    lines.append("{'eval_loss': nan, 'eval_runtime': 147.7, 'epoch': 0.33}")
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("impossible_loss", 1)
    assert "start_above_uniform_guess" not in _kinds(a)


def test_one_impossible_point_right_before_a_masked_nan_is_the_blow_ups_onset(tmp_path):
    """A loss of 122 at the first logging window and exactly 0.0 at every one after (the NaN filter): one point is the
    blow-up already under way in that window, not an incident of its own: the first incident stays the masked NaN."""
    lines = ["{'loss': 122.14, 'learning_rate': 2.5e-05, 'epoch': 0.08}"]
    lines += [f"{{'loss': 0.0, 'learning_rate': 5e-05, 'epoch': {0.08 * (i + 2):.2f}}}" for i in range(8)]
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert a.status == "broken"
    assert a.first_incident.kind == "masked_nan_loss"


def test_a_hand_written_loops_summed_loss_that_learns_is_not_impossible(tmp_path):
    """A hand-written loop printing 'Step N loss: L' with L summed over a batch's response tokens (91 falling to
    about 50, ordinary batch-to-batch swings): its author's choice, not a fault, and the run learned: healthy, no
    impossible_loss."""
    lines = [f"Step {s} loss: {50 + 41 * math.exp(-s / 40) + 6 * math.sin(s):.4f}" for s in range(1, 128, 2)]
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert "impossible_loss" not in _kinds(a), [(f.kind, f.step) for f in a.findings]
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]
