"""Tests of analyzers.first_incident_of: which finding is named first.

From session 10's judging fixes, each rule from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
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
