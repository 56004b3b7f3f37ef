"""The staircase of memorization (`falls_at_epoch_starts`) read from a loss logged the way the HF Trainer logs it.

The Trainer logs the mean loss of each `logging_steps` window and the epoch as `step / steps_per_epoch`; where the
epoch is not a multiple of `logging_steps`, the first point logged in an epoch is the mean of a window that began in
the epoch before, and blends the two levels. Run with `python -m pytest -q tests/test_memorization_staircase.py`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.analyzers.memorization import falls_at_epoch_starts
from forensics.config import Thresholds

TH = Thresholds()
LOGGING_STEPS = 50
STEPS_PER_EPOCH = 1245  # not a multiple of 50: the window logged at 1250 holds 45 steps of the first epoch


def logged_like_the_trainer(per_step_loss: np.ndarray) -> dict[str, pd.Series]:
    """{loss, epoch} as the Trainer logs a per-step loss: each window's mean (4 decimals) at its last step."""
    windows = per_step_loss[: len(per_step_loss) // LOGGING_STEPS * LOGGING_STEPS].reshape(-1, LOGGING_STEPS)
    logged_at = np.arange(1, len(windows) + 1) * LOGGING_STEPS
    return {"loss": pd.Series(np.round(windows.mean(axis=1), 4), index=logged_at, name="loss"),
            "epoch": pd.Series(logged_at / STEPS_PER_EPOCH, index=logged_at, name="epoch")}


def per_step(level_in_epoch, n_epochs: int, seed: int, noise: float = 0.05) -> np.ndarray:
    """A per-step loss over `n_epochs` epochs, `level_in_epoch(epoch, fraction_of_it_done)` times batch noise."""
    step = np.arange(n_epochs * STEPS_PER_EPOCH)
    epoch, done = np.divmod(step, STEPS_PER_EPOCH)
    noise_factor = np.exp(np.random.default_rng(seed).normal(0.0, noise, len(step)))
    return level_in_epoch(epoch, done / STEPS_PER_EPOCH) * noise_factor


def test_a_staircase_logged_in_windows_that_straddle_the_epoch_starts_falls_at_epoch_starts():
    # a small model over a small corpus: a drop of ~0.6 each time the text comes round, nearly flat within an epoch
    loss = per_step(lambda epoch, done: 4.0 - 0.6 * epoch - 0.08 * done, n_epochs=4, seed=1)
    m = logged_like_the_trainer(loss)
    assert falls_at_epoch_starts(m["loss"], m["epoch"])


def test_a_staircase_down_to_a_memorized_level_logged_coarsely_is_memorization():
    # the loss falls by more than half each pass (1.6, 0.72, 0.32, 0.15, 0.066) and is flat within it, no eval loss
    # logged: fewer than `memorization_epochs` passes and never under 0.02, so only the staircase can show it
    loss = per_step(lambda epoch, done: 1.6 * 0.45 ** epoch, n_epochs=5, seed=2)
    m = logged_like_the_trainer(loss)
    found = [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"]
    assert found and "start of each epoch" in found[0].message and found[0].step > 3 * STEPS_PER_EPOCH


def test_a_healthy_multi_epoch_run_logged_in_the_same_windows_does_not_fall_at_epoch_starts():
    # a fine-tune that learns within its epochs (a fall of 0.25 over each) with the small drop at each epoch start
    # that seeing the data again gives (0.08): most of its fall is within the epochs, as a generalising run's is
    loss = per_step(lambda epoch, done: 2.2 - 0.33 * epoch - 0.25 * done, n_epochs=4, seed=3)
    m = logged_like_the_trainer(loss)
    assert not falls_at_epoch_starts(m["loss"], m["epoch"])
    smooth = per_step(lambda epoch, done: 0.9 + 1.4 * np.exp(-(epoch + done) / 1.2), n_epochs=4, seed=4)
    m = logged_like_the_trainer(smooth)
    assert not falls_at_epoch_starts(m["loss"], m["epoch"])
    assert not [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"]
