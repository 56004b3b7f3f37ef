"""Loss spikes: the training loss jumping well above its recent robust baseline (see `spikes`).

A spike is a warning, whether or not it settles (a rise that never comes back is the
`divergence` detector's to call an error); several in a row are one storm finding. A jump at
a learning-rate restart is a new training phase on new data, not an incident: info. So are, in a
log of every step, spikes at most three points long that settle at once (single hard batches).
Preference/RL logs are skipped: their loss is not a fit measure and sits near zero by design.
"""
from __future__ import annotations

import numpy as np

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, format_number, is_preference_log, real_loss
from .spike_findings import spike_findings
from .spikes import Spike, SpikeRule, find_spikes, group_evidence, largest


def loss_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.loss_spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.loss_spike_recover_factor,
                     recover_points=thresholds.spike_recover_points,
                     early_factor=thresholds.loss_spike_early_factor)


def detect_loss_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`loss_spike` findings over the real (unmasked, finite) training loss: one per spike or storm."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    loss = real_loss(metrics)
    spikes = find_spikes(loss, loss_spike_rule(thresholds))
    batches = _single_batches(loss, spikes, thresholds)
    rest = [s for s in spikes if s not in batches]
    findings = spike_findings("loss_spike", LOSS, metrics[LOSS], rest, metrics, thresholds)
    return findings + ([_batch_noise(batches)] if batches else [])


_BATCH_STEPS = 2  # a hard batch may leave the next step or two a little high too


def _single_batches(loss, spikes: list[Spike], thresholds: Thresholds) -> list[Spike]:
    """In a log of every step, spikes at most three logged points long that settle at once and stay under
    `spike_warn_factor`: single hard batches, the per-step noise of small batches (VERDICTS.md)."""
    if len(loss) < 2 or float(np.median(np.diff(loss.index.to_numpy()))) != 1:
        return []
    return [s for s in spikes if s.recovered and s.end_step - s.step <= _BATCH_STEPS
            and s.peak / s.baseline < thresholds.spike_warn_factor]


def _batch_noise(batches: list[Spike]) -> Finding:
    big = largest(batches)
    message = (f"{len(batches)} single-batch loss {'spike' if len(batches) == 1 else 'spikes'} in a log of every step, the "
               f"largest to {format_number(big.peak)} at step {big.peak_step} ({big.peak / big.baseline:.1f}x its recent "
               f"median {format_number(big.baseline)}), each over within {_BATCH_STEPS} steps: the per-step noise of small batches.")
    return Finding("loss_spike", "info", batches[0].step, message, end_step=batches[-1].step, metric=LOSS,
                   evidence=dict(group_evidence(batches), single_batches=True))
