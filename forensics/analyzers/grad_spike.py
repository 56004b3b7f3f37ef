"""grad_norm spikes: a jump far above the recent robust baseline (see `spikes`), and whether it settled.

A recovered spike is a warning. Several spikes in a row (`spike_storm_count`, each within
`spike_storm_gap` points of the last) are one unstable stretch and one finding, named by its
largest spike. A jump right at a learning-rate restart is a new training phase (info). A
spike followed by non-finite values or a collapse is made an error by the chain linking in
`chain`, which also records it as their cause.
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, Metrics
from .spike_findings import spike_findings
from .spikes import SpikeRule, find_spikes


def grad_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.spike_recover_factor, recover_points=thresholds.spike_recover_points,
                     early_factor=thresholds.spike_early_factor)


def detect_grad_norm_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`grad_norm_spike` findings (warnings; the chain may raise them): one per spike, or one per storm."""
    grad = metrics.get(GRAD_NORM)
    if grad is None:
        return []
    spikes = find_spikes(grad, grad_spike_rule(thresholds))
    return spike_findings("grad_norm_spike", GRAD_NORM, grad, spikes, metrics, thresholds,
                          warn_factor=thresholds.spike_warn_factor)
