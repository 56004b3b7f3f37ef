"""Tests of the fp16 scaler rules: the start-up search, NaN grad norms at the first steps.

From the session-8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


def _scale_halving_from(start: float, halvings: int, steps: int, late: tuple[int, ...] = ()) -> dict:
    """A loss scale logged every step from 1: halved at each of the first `halvings` steps from `start`, then steady,
    with one more halving at each step of `late`."""
    scale, values = start, []
    for step in range(1, steps + 1):
        if 2 <= step <= halvings + 1 or step in late:
            scale /= 2
        values.append(scale)
    return {"loss_scale": pd.Series(values, index=range(1, steps + 1), dtype="float64")}


def test_the_scalers_start_up_search_is_skipped_steps_not_a_storm():
    """NVIDIA/Megatron-LM's gpt3-357m TensorBoard: the scale halves at every one of the first 15 iterations from
    2**32 (Megatron's initial scale) to 2**18, then the run trains on for 85 iterations."""
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    (found,) = detect_loss_scale_overflow(_scale_halving_from(2.0 ** 32, 15, 100), Thresholds())
    assert (found.kind, found.severity, found.step) == ("skipped_steps", "warning", 2)
    assert "searching down from its initial scale" in found.message


@pytest.mark.parametrize("metrics", [
    _scale_halving_from(65536.0, 0, 100, late=tuple(range(50, 56))),  # six in a row mid-run: a storm
    _scale_halving_from(2.0 ** 32, 15, 60),  # the search takes a quarter of the log: not just a start
    _scale_halving_from(2.0 ** 32, 15, 100, late=(40, 60, 80)),  # overflows go on after it
])
def test_overflows_in_a_row_past_the_start_are_still_a_storm(metrics):
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    (found,) = detect_loss_scale_overflow(metrics, Thresholds())
    assert found.kind == "loss_scale_overflow"


def _nan_grad_norms_at_the_start(nan_steps: list[int], every: int = 1) -> dict:
    steps = list(range(every, 40 * every + 1, every))
    grad = [float("nan") if s in nan_steps else 4.0 - s / (20 * every) for s in steps]
    return {"loss": pd.Series([2.8 - s / (40 * every) for s in steps], index=steps, dtype="float64"),
            "grad_norm": pd.Series(grad, index=steps, dtype="float64"),
            "learning_rate": pd.Series([5e-5 * (1 - s / (41 * every)) for s in steps], index=steps)}


def test_nan_grad_norms_at_the_first_logged_steps_are_a_fresh_scaler_skipping():
    """chenkx612/local-roleplay-llm (ms-swift, fp16): grad_norm NaN at steps 1-6 with a finite loss at each, finite
    from step 7 on: a fresh GradScaler halving down from 2**16, not a run that broke."""
    from forensics.analyzers.skipped_steps import detect_skipped_steps
    (found,) = detect_skipped_steps(_nan_grad_norms_at_the_start([1, 2, 3, 4, 5, 6]), Thresholds())
    assert (found.kind, found.step, found.evidence["count"]) == ("skipped_steps", 1, 6)
    assert found.evidence["at_restart"]


@pytest.mark.parametrize("nan_steps, every", [
    ([10, 11, 12, 13, 14, 15], 1),  # six in a row mid-run: more than a scaler's isolated skips
    ([10, 20, 30, 40], 10),  # logged every 10 steps: four NaN points hide up to 40 skipped steps
])
def test_long_nan_grad_norm_stretches_past_the_start_or_between_logs_are_not_scaler_skips(nan_steps, every):
    from forensics.analyzers.skipped_steps import detect_skipped_steps
    assert detect_skipped_steps(_nan_grad_norms_at_the_start(nan_steps, every), Thresholds()) == []


def test_a_start_up_search_then_few_overflows_with_the_scale_rising_between_is_skipped_steps():
    """gouqi666_deep-speed-chat's PPO: 65536 down to 2048 in the first steps, then a few overflows over the next 100
    steps while the scaler grows its scale back between them (1024, 8192, 4096, 2048): it found its level and probes
    up from it - skipped updates, not a storm. (Beside it, the scale that only falls on stays a storm, above.)"""
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    metrics = _scale_halving_from(2.0 ** 32, 15, 100, late=(40, 60, 80))
    scale = metrics["loss_scale"].copy()
    scale[scale.index >= 50] *= 8  # the window's doublings between the late overflows
    scale[scale.index >= 70] *= 4
    (found,) = detect_loss_scale_overflow({"loss_scale": scale}, Thresholds())
    assert (found.kind, found.step) == ("skipped_steps", 2)
