"""Tests of the noise rules of the spike and collapse analyzers on healthy runs.

Noise read as incidents on healthy real runs (fix-ar-noise): each test builds a small run of the shape the real
program writes and checks the noise stays quiet, beside a run of the same shape whose incident must still fire."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.loss_spike import detect_loss_spikes
from forensics.config import Thresholds


TH = Thresholds()


def _series(values: np.ndarray, every: int) -> dict[str, pd.Series]:
    return {"loss": pd.Series(np.asarray(values, dtype="float64"), index=np.arange(len(values)) * every)}


def _warnings(findings) -> list[int]:
    return [f.step for f in findings if f.severity == "warning"]


# ---- (1) one micro-batch's loss printed every N steps ----------------------------------------------------------------


def _micro_batch_losses(n: int, seed: int) -> np.ndarray:
    """One micro-batch's loss, as a hand-written loop prints it every 10 steps: a level falling from about 8 (the
    untrained model on the task) to 1 within a few prints and to 0.4 by the end, times a heavy-tailed batch factor
    (lognormal, sigma 1: its 90th percentile 3.6x its median, as a real loop's 1.3-2.4 over a median of 0.25-0.6)."""
    rng = np.random.default_rng(seed)
    level = 0.4 + 0.6 * np.exp(-np.arange(n) / (n / 4)) + 7.0 * np.exp(-np.arange(n) / 5)
    return level * np.exp(rng.normal(0.0, 1.0, n))


def test_recurring_one_point_jumps_of_a_micro_batch_loss_printed_every_10_steps_are_noise():
    loss = _micro_batch_losses(1500, 101)
    found = detect_loss_spikes(_series(loss, 10), TH)
    assert _warnings(found) == []
    assert [(f.severity, f.evidence.get("single_batches")) for f in found] == [("info", True)]


def test_a_jump_that_stays_high_in_the_same_noisy_log_is_still_a_warning():
    loss = _micro_batch_losses(1500, 101)
    loss[900:915] = 30.0 * np.median(loss[700:900])  # the model itself worse for 15 prints in a row
    assert any(895 * 10 <= step <= 905 * 10 for step in _warnings(detect_loss_spikes(_series(loss, 10), TH)))


def test_a_lone_jump_in_a_quiet_log_printed_every_10_steps_is_still_a_warning():
    rng = np.random.default_rng(102)
    loss = (0.8 + 1.7 * np.exp(-np.arange(600) / 150)) * (1 + rng.normal(0, 0.03, 600))
    loss[300] *= 4
    assert _warnings(detect_loss_spikes(_series(loss, 10), TH)) == [3000]



def _few_kinds_of_batches(seed: int) -> np.ndarray:
    """A Trainer LoRA on batches of 2 logged every 5 steps (135 logs): the loss falls from 7.7 within a few dozen
    steps to the level of its batches, which are of three kinds (about 0.08, 0.55 and 1.07, as a small task's
    examples are), and three hard ones of 1.3-1.8; the rolling median dips to the lowest kind now and then."""
    rng = np.random.default_rng(seed)
    n = 135
    batches = rng.choice([0.08, 0.55, 1.07], n, p=[0.45, 0.35, 0.2]) * np.exp(rng.normal(0, 0.15, n))
    batches[rng.choice(np.arange(20, n), 3, replace=False)] = rng.uniform(1.3, 1.8, 3)
    return np.maximum(batches, 7.7 * np.exp(-np.arange(n) / 6))


def test_short_jumps_recurring_through_a_short_log_of_a_few_kinds_of_batches_are_noise():
    found = detect_loss_spikes(_series(_few_kinds_of_batches(212), 5), TH)
    assert _warnings(found) == [] and [f.evidence.get("single_batches") for f in found] == [True]


def test_the_same_log_climbing_for_fifteen_logs_is_still_a_warning():
    loss = _few_kinds_of_batches(212)
    loss[100:115] = 4.0
    assert any(495 <= step <= 505 for step in _warnings(detect_loss_spikes(_series(loss, 5), TH)))


# ---- (4) a per-step loss near 0 whose hard examples still throw a batch now and then --------------------------------


def _memorizing_losses(n: int, seed: int) -> np.ndarray:
    """A small-batch LoRA logged every step that learns its data by heart: 2.6 falling to about 0.001 (rounded to
    4 decimals as the Trainer prints it), a hard example lifting one step to 0.2-0.5 about every 150 steps."""
    rng = np.random.default_rng(seed)
    loss = 2.6 * np.exp(-np.arange(n) / 40.0) + 0.001 * np.exp(rng.normal(0, 0.5, n))
    hard = np.arange(100, n, 150) + rng.integers(0, 20, len(np.arange(100, n, 150)))
    loss[hard] = rng.uniform(0.2, 0.5, len(hard))
    return np.round(loss, 4)


def test_hard_batches_over_a_loss_near_zero_are_noise_not_hundredfold_spikes():
    loss = _memorizing_losses(4000, 103)
    assert _warnings(detect_loss_spikes(_series(loss, 1), TH)) == []


def test_a_loss_near_zero_that_climbs_back_and_stays_up_is_still_a_warning():
    loss = _memorizing_losses(4000, 103)
    loss[3000:3030] = 1.5  # the model lost what it had learned for thirty steps
    assert any(2995 <= step <= 3005 for step in _warnings(detect_loss_spikes(_series(loss, 1), TH)))


# ---- (2) recurring huge grad norms, clipped, on a run whose eval loss keeps falling ---------------------------------


def _clipped_lora(seed: int, eval_end: float = 0.53) -> dict[str, pd.Series]:
    """A Trainer LoRA on batches of 2 with max_grad_norm 1.0, logged every 5 steps for 675 steps, eval every 25: the
    grad_norm about 1 (4 over the first eight logs) with 24 norms of 400-2100 recurring from the ninth log to the
    end, single hard batches; the loss 7.7 falling to about 0.6 with batch noise; the eval loss 2.67 falling to
    `eval_end`."""
    rng = np.random.default_rng(seed)
    n, every = 135, 5
    grad = np.exp(rng.normal(0.0, 0.6, n)) * np.where(np.arange(n) < 8, 4.0, 1.0)
    hard = np.sort(rng.choice(np.arange(8, n), 24, replace=False))
    grad[hard] = rng.uniform(400, 2100, len(hard))
    loss = (0.5 + 7.2 * np.exp(-np.arange(n) / 8)) * np.exp(rng.normal(0.0, 0.5, n))
    eval_steps = np.arange(25, n * every + 1, 25)
    evals = eval_end + (2.67 - eval_end) * np.exp(-(eval_steps - 25) / 60)
    step = np.arange(1, n + 1) * every
    return {"loss": pd.Series(loss, index=step), "grad_norm": pd.Series(grad, index=step),
            "eval_loss": pd.Series(evals, index=eval_steps)}


def test_recurring_clipped_grad_norms_under_a_falling_eval_loss_are_a_heavy_tail_not_a_spike_storm():
    from forensics.analyzers.grad_spike import detect_grad_norm_spikes

    found = detect_grad_norm_spikes(_clipped_lora(104), TH)
    assert found and [f.severity for f in found] == ["info"] * len(found)
    assert any(f.evidence.get("heavy_tail") for f in found)


def test_the_same_storm_while_the_eval_loss_climbs_back_is_still_a_warning():
    from forensics.analyzers.grad_spike import detect_grad_norm_spikes

    run = _clipped_lora(104)
    evals = run["eval_loss"]
    run["eval_loss"] = pd.Series(np.minimum(evals, 0.8) + np.linspace(0, 1.5, len(evals)) ** 2 / 2, index=evals.index)
    assert "warning" in [f.severity for f in detect_grad_norm_spikes(run, TH)]
    del run["eval_loss"]  # and with no held-out loss to say the run learned through it
    assert "warning" in [f.severity for f in detect_grad_norm_spikes(run, TH)]


def test_a_memorized_loss_back_at_its_floor_after_a_few_hard_batches_is_no_loss_collapse():
    from forensics.analyzers.collapse import detect_loss_collapse

    loss = _memorizing_losses(4000, 103)
    loss[3000:3005] = [0.21, 0.35, 0.12, 0.28, 0.4]  # five hard batches in a row, then the floor again
    loss[3005:3010] = 0.0003
    found = detect_loss_collapse(_series(loss, 1), TH)
    assert found and "loss_collapse" not in [f.kind for f in found]


def test_a_loss_that_held_its_level_and_drops_to_zero_at_once_is_still_a_loss_collapse():
    from forensics.analyzers.collapse import detect_loss_collapse

    rng = np.random.default_rng(105)
    held, fallen, after = 1.2 + rng.normal(0, 0.1, 300), np.full(20, 0.0002), 1.1 + rng.normal(0, 0.1, 80)
    loss = np.round(np.concatenate([held, fallen, after]), 4)
    assert [f.step for f in detect_loss_collapse(_series(loss, 1), TH) if f.kind == "loss_collapse"] == [300]
