"""Tests of analyzers/learning_evidence.py: where a first window above a plateau is no
evidence of learning, and a token accuracy that agrees with it.

From the day-10 guard pass two (rules that called unlearned or overfitting runs fine): each run is a small HF
Trainer `trainer_state.json` built as the reviewer built it, beside a run the rule must still let through."""
from __future__ import annotations

import numpy as np
import pandas as pd

from support.state_writes import _analyze, _kinds, _write_state


# ---- (3) the first window: a hard first batch over a flat log, a resumed log's first window, a weak one-point test


def _flat_logs():
    """The reviewer's two flat logs of 40 windows (1.50, noise 1.3% a window, the first window 0.065 up): a resumed
    run's (from step 1010) and a fresh one's at LR 1e-8 (from step 10), drawn in that order."""
    rng = np.random.default_rng(3)
    drawn = [[1.5 * (1 + 0.013 * rng.standard_normal()) + (0.065 if i == 0 else 0) for i in range(40)] for _ in "rf"]
    return drawn[0], drawn[1]


def _flat_state(folder, losses, first_step, learning_rate):
    log = [{"step": first_step + 10 * i, "epoch": round((first_step + 10 * i) / 2000, 4), "loss": round(loss, 4),
            "learning_rate": learning_rate} for i, loss in enumerate(losses)]
    _write_state(folder, log, max_steps=first_step + 390)


def test_a_flat_run_whose_first_window_is_four_percent_up_has_no_evidence_it_learned(tmp_path):
    _flat_state(tmp_path, _flat_logs()[1], first_step=10, learning_rate=1e-8)
    a = _analyze(tmp_path)
    assert a.status == "warning" and "no_learning_evidence" in _kinds(a), [f.message for f in a.findings]


def test_a_resumed_log_whose_first_window_stands_up_has_no_run_start_to_show_learning(tmp_path):
    _flat_state(tmp_path, _flat_logs()[1], first_step=1010, learning_rate=1e-4)
    a = _analyze(tmp_path)
    assert a.status == "warning" and "no_learning_evidence" in _kinds(a), [f.message for f in a.findings]


def _plateau_with_first_window(first_loss, n=40, seed=11):
    """A log of `n` 10-step windows: the first at `first_loss`, then a plateau at 0.578 with a noise of 0.055."""
    rng = np.random.default_rng(seed)
    steps = [10 * (i + 1) for i in range(n)]
    values = [first_loss] + [0.578 + 0.055 * float(rng.standard_normal()) for _ in range(n - 1)]
    return pd.Series(values, index=steps)


def test_a_first_window_under_three_noise_units_over_a_plateau_is_within_chance():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.analyzers.metrics import point_noise
    from forensics.config import Thresholds

    loss = _plateau_with_first_window(0.72)
    noise = point_noise(loss.to_numpy())
    assert 2.5 <= (0.72 - float(loss.iloc[1:].median())) / noise < 3  # (one flat run in 50-80 stands this far up)
    assert fell_in_the_first_window({"loss": loss}, loss, Thresholds()) is None


def test_a_first_window_five_percent_over_a_quiet_plateau_is_a_hard_first_batch_not_learning():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    rng = np.random.default_rng(12)
    loss = pd.Series([1.575] + [1.5 + 0.004 * float(rng.standard_normal()) for _ in range(39)],
                     index=range(10, 410, 10))  # (the first window about 15 noise units up, 5% over the rest)
    assert fell_in_the_first_window({"loss": loss}, loss, Thresholds()) is None


def test_a_first_window_far_over_a_plateau_in_a_log_that_begins_mid_run_is_no_fall_from_the_start():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    from_start = _plateau_with_first_window(0.95)
    resumed = pd.Series(from_start.to_numpy(), index=from_start.index + 1000)  # (a resume from checkpoint-1000)
    assert fell_in_the_first_window({"loss": from_start}, from_start, Thresholds()) is not None
    assert fell_in_the_first_window({"loss": resumed}, resumed, Thresholds()) is None


def test_a_first_window_far_over_a_plateau_is_a_fall_within_it(tmp_path):
    log = [{"step": int(s), "epoch": round(s / 2000, 4), "loss": round(v, 4), "learning_rate": 2e-4}
           for s, v in _plateau_with_first_window(0.95).items()]
    _write_state(tmp_path, log, max_steps=400)
    a = _analyze(tmp_path)
    assert "no_learning_evidence" not in _kinds(a), [f.message for f in a.findings]
    assert a.status == "healthy" and a.learning is not None, [f.message for f in a.findings]


# ---- (4) a token accuracy logged twice, or smooth, that rose agrees with the fall; one that did not rise does not


def _first_window_fall_with_accuracy(accuracy: pd.Series):
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    loss = _plateau_with_first_window(0.95)
    return fell_in_the_first_window({"loss": loss, "mean_token_accuracy": accuracy}, loss, Thresholds())


def test_a_token_accuracy_logged_twice_that_rose_agrees_with_the_first_window_fall():
    assert _first_window_fall_with_accuracy(pd.Series([0.80, 0.84], index=[10, 400])) is not None


def test_a_smooth_token_accuracy_that_rose_agrees_with_the_first_window_fall():
    assert _first_window_fall_with_accuracy(pd.Series([0.80] + [0.84] * 39, index=range(10, 410, 10))) is not None


def test_a_token_accuracy_logged_twice_that_fell_does_not_agree():
    assert _first_window_fall_with_accuracy(pd.Series([0.84, 0.80], index=[10, 400])) is None
