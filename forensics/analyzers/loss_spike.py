"""Loss spikes: the training loss jumping well above its recent robust baseline (see `spikes`).

A spike is a warning, whether or not it settles (a rise that never comes back is the
`divergence` detector's to call an error); several in a row are one storm finding. A jump at
a learning-rate restart is a new training phase on new data, not an incident: info.
Preference/RL logs are skipped: their loss is not a fit measure and sits near zero by design.
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, is_preference_log, real_loss
from .spike_findings import spike_findings
from .spikes import SpikeRule, find_spikes


def loss_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.loss_spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.loss_spike_recover_factor,
                     recover_points=thresholds.spike_recover_points)


def detect_loss_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`loss_spike` findings over the real (unmasked, finite) training loss: one per spike or storm."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    spikes = find_spikes(real_loss(metrics), loss_spike_rule(thresholds))
    return spike_findings("loss_spike", LOSS, metrics[LOSS], spikes, metrics, thresholds)
