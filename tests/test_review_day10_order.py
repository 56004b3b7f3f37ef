"""Session 10: which finding is named first, and overfitting read on a quiet eval loss, each rule from a real run the
corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers import analyze_metrics, first_incident_of
from forensics.config import Thresholds

# ---- a grad_norm spike one or two logged points before a loss spike: the loss spike is the incident ----------------


def _sft_log(loss_jump: dict[int, float], grad_jump: dict[int, float]) -> dict:
    """A LoRA SFT log every 10 steps to step 1200 (TRL's dicts: loss, grad_norm): the loss settled near 0.045 with a
    little wobble, grad_norm near 0.35, and the given values put in at their steps."""
    steps = list(range(10, 1210, 10))
    rng = np.random.default_rng(7)
    loss = 0.045 + 0.004 * rng.standard_normal(len(steps))
    grad = 0.35 + 0.05 * rng.standard_normal(len(steps))
    loss_series = pd.Series(loss, index=steps, dtype="float64")
    grad_series = pd.Series(grad, index=steps, dtype="float64")
    for step, value in loss_jump.items():
        loss_series[step] = value
    for step, value in grad_jump.items():
        grad_series[step] = value
    return {"loss": loss_series, "grad_norm": grad_series}


def _first(metrics: dict):
    return first_incident_of(analyze_metrics(metrics, Thresholds()))


def test_a_grad_norm_spike_two_points_before_a_loss_spike_names_the_loss_spike_first():
    # N-Haritha16's Phi-3 LoRA: grad_norm 1.93 at step 430 and 9.4 at 440, the loss 0.126 at 440 and 0.206 at 450
    metrics = _sft_log({440: 0.126, 450: 0.2057, 460: 0.15, 470: 0.12}, {430: 1.93, 440: 9.375, 450: 4.0, 460: 2.0})
    first = _first(metrics)
    assert (first.kind, first.severity) == ("loss_spike", "warning")
    assert 440 <= first.step <= 450


def test_a_grad_norm_spike_well_before_a_loss_spike_stays_the_first_incident():
    # Miguel-Alessio's chess LoRA (logged every 5 steps): grad_norm 2.6 at 2650, the loss spike five points later
    metrics = _sft_log({490: 0.2057, 500: 0.15, 510: 0.12}, {430: 1.93, 440: 9.375, 450: 4.0, 460: 2.0})
    first = _first(metrics)
    assert (first.kind, first.step) == ("grad_norm_spike", 430)


# ---- a lone jump in a few every-step points: the log has not shown its per-step noise, so no single hard batch -------

from forensics.analyzers.loss_spike import detect_loss_spikes  # noqa: E402


def _every_step(losses: list[float], first_step: int) -> dict:
    return {"loss": pd.Series(losses, index=range(first_step, first_step + len(losses)), dtype="float64")}


def test_a_jump_among_the_first_few_points_of_an_every_step_log_is_a_loss_spike_warning():
    # haotian-liu/LLaVA issue 918: steps 2564-2569 of 10,485 pasted, the loss 0.66, 0.80, 4.27, 0.77, 0.56, 0.82
    (found,) = detect_loss_spikes(_every_step([0.6623, 0.8022, 4.2653, 0.77, 0.556, 0.8223], 2564), Thresholds())
    assert (found.kind, found.severity, found.step) == ("loss_spike", "warning", 2566)


def test_a_lone_jump_in_a_long_every_step_log_is_still_a_single_hard_batch():
    # the same jump after a hundred steps of small-batch noise: the log shows its per-step spread
    rng = np.random.default_rng(3)
    losses = list(0.75 + 0.1 * rng.standard_normal(200))
    losses[100] = 4.2653
    (found,) = detect_loss_spikes(_every_step(losses, 2400), Thresholds())
    assert (found.kind, found.severity, found.step) == ("loss_spike", "info", 2500)
    assert found.evidence.get("single_batches")


# ---- a log that begins mid-run and whose loss did not fall: the advice is its missing start -------------------------

from forensics.analyzers.learning_evidence import detect_no_learning_evidence  # noqa: E402


def test_a_flat_excerpt_that_begins_mid_run_says_its_start_is_missing():
    # haotian-liu/LLaVA issue 918's paste: six every-step losses from step 2564 of a 10,485-step run
    (found,) = detect_no_learning_evidence(_every_step([0.6623, 0.8022, 4.2653, 0.77, 0.556, 0.8223], 2564),
                                           Thresholds())
    assert (found.kind, found.severity, found.step) == ("no_learning_evidence", "warning", 2564)
    assert "begins at step 2564, not at the run's start" in found.message
    assert "Check the learning rate" not in found.message


def test_a_flat_log_from_the_run_s_start_keeps_the_advice_about_the_training():
    (found,) = detect_no_learning_evidence(_every_step([0.6623, 0.8022, 0.7, 0.77, 0.556, 0.8223], 1), Thresholds())
    assert "Check the learning rate" in found.message
    assert "not at the run's start" not in found.message
