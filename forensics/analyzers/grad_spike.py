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
from .metrics import GRAD_NORM, Metrics, fmt, lr_restart_steps, restart_near
from .spikes import Spike, SpikeRule, aftermath, find_spikes, group_evidence, group_spikes, largest


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
    restarts = lr_restart_steps(metrics)
    findings, incidents = [], []
    for spike in find_spikes(grad, grad_spike_rule(thresholds)):
        restart = restart_near(grad, spike.step, restarts, thresholds.spike_recover_points)
        if restart is None:
            incidents.append(spike)
        else:
            findings.append(_phase_start(spike, restart))
    for group in group_spikes(incidents, thresholds.spike_storm_gap):
        if len(group) >= thresholds.spike_storm_count:
            findings.append(_storm(group))
        else:
            findings.extend(_single(s) for s in group)
    return findings


def _end(spike: Spike) -> int | None:
    return spike.end_step if spike.end_step != spike.step else None


def _single(spike: Spike) -> Finding:
    peak = f", peak {fmt(spike.peak)} at step {spike.peak_step}" if spike.peak_step != spike.step else ""
    message = (f"grad_norm spikes to {fmt(spike.value)} at step {spike.step}, {spike.factor:.0f}x its recent "
               f"median {fmt(spike.baseline)}{peak}; {aftermath(spike)}.")
    return Finding("grad_norm_spike", "warning", spike.step, message, end_step=_end(spike), metric=GRAD_NORM,
                   evidence=group_evidence([spike]))


def _phase_start(spike: Spike, restart: int) -> Finding:
    message = (f"grad_norm jumps to {fmt(spike.value)} at step {spike.step} (from about {fmt(spike.baseline)}) "
               f"as the learning-rate schedule restarts at step {restart}: a new training phase, not an incident.")
    return Finding("grad_norm_spike", "info", spike.step, message, end_step=_end(spike), metric=GRAD_NORM,
                   evidence=dict(group_evidence([spike]), lr_restart=restart))


def _storm(group: list[Spike]) -> Finding:
    big = largest(group)
    message = (f"grad_norm spikes {len(group)} times from step {group[0].step} to {group[-1].end_step}, "
               f"the largest to {fmt(big.peak)} at step {big.peak_step} ({big.peak / big.baseline:.0f}x its recent "
               f"median {fmt(big.baseline)}); {aftermath(group[-1])}.")
    return Finding("grad_norm_spike", "warning", group[0].step, message, end_step=group[-1].end_step,
                   metric=GRAD_NORM, evidence=dict(group_evidence(group), storm=True))
