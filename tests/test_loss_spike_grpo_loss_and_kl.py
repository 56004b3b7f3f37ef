"""Tests of analyzers/loss_spike.py: a GRPO loss and KL blowing up at one step.

From the session-8 judging rules, each from a real run the corpus holds (tests/realworld/PROVENANCE.md)."""
from __future__ import annotations

import pandas as pd
import pytest
from forensics.config import Thresholds


def _grpo_log(blow_ups: dict[int, tuple[float, float]]) -> dict:
    """250 GRPO steps: the loss beta x KL near 0 and rising slowly, the reward rising, with `blow_ups` {step: (loss,
    kl)} replacing those steps' values."""
    steps = range(1, 251)
    kl = {s: 0.005 + 0.0001 * s for s in steps}
    loss = {s: 0.04 * kl[s] for s in steps}
    for s, (bad_loss, bad_kl) in blow_ups.items():
        loss[s], kl[s] = bad_loss, bad_kl
    return {"loss": pd.Series(loss, dtype="float64"), "kl": pd.Series(kl, dtype="float64"),
            "reward": pd.Series({s: 0.05 + s / 200 for s in steps}, dtype="float64")}


def test_a_grpo_loss_and_kl_blowing_up_at_one_step_is_a_loss_spike():
    """siddhartth04's Unsloth GRPO notebook: loss 234.5 and kl 5,864 at step 97 (KL median 0.018), 12.6 / 316 at 250."""
    from forensics.analyzers.loss_spike import detect_loss_spikes
    (found,) = detect_loss_spikes(_grpo_log({97: (234.5492, 5863.73), 250: (12.6385, 315.96)}), Thresholds())
    assert (found.kind, found.severity, found.step, found.end_step) == ("loss_spike", "warning", 97, 250)
    assert "blew up against its reference" in found.message


@pytest.mark.parametrize("blow_ups", [
    {},  # a healthy GRPO log: the loss near 0 throughout
    {97: (0.05, 1.2)},  # a KL jump with a loss still under a nat: a noisy batch, not a blow-up
    {97: (1.5, 0.02)},  # a loss jump the KL does not share (another loss term): not the policy leaving the reference
])
def test_grpo_logs_without_a_joint_loss_and_kl_blow_up_raise_no_spike(blow_ups):
    from forensics.analyzers.loss_spike import detect_loss_spikes
    assert detect_loss_spikes(_grpo_log(blow_ups), Thresholds()) == []
