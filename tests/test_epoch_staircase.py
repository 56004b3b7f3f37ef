"""Memorization read from a staircase at the epoch boundaries at any loss level (`analyzers.epoch_staircase`).

The shape of two GPT-2 runs on raw text (anishamahuli_shakespeare-bot, Abdelmanemm_Fine_Tunning_GPT2): a first pass
that learns (4.2 -> 3.6), then a one-step drop larger than that whole fall each time the text comes round, flat in
between. Run with `python -m pytest -q tests/test_epoch_staircase.py`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"
EPOCH = 1320  # optimizer steps an epoch (anishamahuli's), not a multiple of the logging interval
EVERY = 50


def trainer_log(level, epochs: int = 3, noise: float = 0.04, seed: int = 0, every: int = EVERY) -> dict:
    """{loss, epoch} as the HF Trainer logs a per-step loss `level(epoch, fraction done)` with batch noise: each
    window's mean at its last step, the epoch as step / EPOCH."""
    step = np.arange(epochs * EPOCH)
    epoch, done = np.divmod(step, EPOCH)
    per_step = level(epoch, done / EPOCH) + np.random.default_rng(seed).normal(0.0, noise, len(step))
    windows = per_step[: len(step) // every * every].reshape(-1, every)
    at = np.arange(1, len(windows) + 1) * every
    return {"loss": pd.Series(np.round(windows.mean(axis=1), 4), index=at),
            "epoch": pd.Series(np.round(at / EPOCH, 4), index=at)}


def raw_text_staircase(epoch, done):
    """4.2 -> 3.6 over the first pass on fresh text, then 0.6 lower at each pass start and flat inside it."""
    return np.where(epoch == 0, 4.2 - 0.6 * done, 3.6 - 0.6 * epoch - 0.03 * done)


def memorization(metrics: dict) -> list:
    return [f for f in detect_loss_collapse(metrics, Thresholds()) if f.kind == "memorization"]


def test_a_staircase_whose_drops_outdo_the_first_pass_is_memorization_at_the_first_point_past_it():
    found = memorization(trainer_log(raw_text_staircase))
    assert [(f.severity, f.step) for f in found] == [("warning", 1350)]  # the first point past step 1320
    assert "no eval loss was logged" in found[0].message


def test_an_eval_that_falls_inside_the_flat_passes_is_the_training_set_and_does_not_hide_it():
    # eval_dataset = the training set: each example the pass shows again gets easier, so it falls through each pass
    metrics = trainer_log(raw_text_staircase)
    at = np.arange(100, 3 * EPOCH, 100)
    passes, done = np.divmod(at, EPOCH)
    metrics["eval_loss"] = pd.Series(4.0 - 0.7 * passes - 0.6 * done / EPOCH, index=at)
    found = memorization(metrics)
    assert [f.step for f in found] == [1350] and "eval_loss falls inside those flat passes" in found[0].message


def test_a_held_out_eval_that_stays_flat_inside_the_passes_keeps_the_staircase_silent():
    metrics = trainer_log(raw_text_staircase)
    at = np.arange(100, 3 * EPOCH, 100)
    metrics["eval_loss"] = pd.Series(np.where(at < EPOCH, 4.0 - 0.5 * at / EPOCH, 3.45), index=at)
    assert memorization(metrics) == []


def test_drops_smaller_than_the_first_pass_fall_are_multi_epoch_sft_not_memorization():
    # yc1999_stanford_alpaca's shape (judged healthy): 1.5 at the first step, ~1.05 within the warm-up and flat, drops
    # of 0.36 at the epoch starts, logged every step
    def alpaca(epoch, done):
        return np.where((epoch == 0) & (done < 0.03), 1.5 - 15 * done, 1.05 - 0.36 * epoch)
    assert memorization(trainer_log(alpaca, noise=0.04, every=1)) == []


def test_drops_within_the_noise_or_a_pass_that_keeps_falling_are_not_a_staircase():
    def small_drops(epoch, done):  # 06Anirudh24's mild repetition gains: a slow fall inside, ~0.1 at the starts
        return 2.77 - 0.19 * (epoch + done) - 0.1 * epoch
    assert memorization(trainer_log(small_drops)) == []

    def noisy(epoch, done):  # drops of 0.6 after a first pass that fell 0.2, in windows whose means wander ~0.1
        return np.where(epoch == 0, 4.0 - 0.2 * done, 3.8 - 0.6 * epoch)
    assert memorization(trainer_log(noisy, noise=0.6, seed=1)) == []


def test_the_notebook_table_of_a_finished_run_is_read_as_a_staircase():
    # Abdelmanemm_Fine_Tunning_GPT2: 'Step | Training Loss' under '[30000/30000 2:33:21, Epoch 3/3]'
    a = forensics.analyze(CORPUS / "Abdelmanemm_Fine_Tunning_GPT2", check_checkpoints=False)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "memorization", 10200)


def test_the_alpaca_staircase_judged_healthy_stays_healthy():
    assert forensics.analyze(CORPUS / "yc1999_stanford_alpaca", check_checkpoints=False).status == "healthy"
