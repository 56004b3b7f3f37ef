"""Loss spikes: the training loss jumping well above its recent robust baseline (see `spikes`).

A spike is a warning, whether or not it settles (a rise that never comes back is the
`divergence` detector's to call an error); several in a row are one storm finding. A jump at
a learning-rate restart is a new training phase on new data, not an incident: info.
Preference/RL logs are skipped: their loss is not a fit measure and sits near zero by design.
"""
from __future__ import annotations

from ..config import Thresholds
from ..findings import Finding
from .metrics import LOSS, Metrics, fmt, is_preference_log, lr_restart_steps, real_loss, restart_near
from .spikes import Spike, SpikeRule, aftermath, find_spikes, group_evidence, group_spikes, largest


def loss_spike_rule(thresholds: Thresholds) -> SpikeRule:
    return SpikeRule(window=thresholds.spike_window, min_history=thresholds.spike_min_history,
                     factor=thresholds.loss_spike_factor, mad_z=thresholds.spike_mad_z,
                     recover_factor=thresholds.loss_spike_recover_factor,
                     recover_points=thresholds.spike_recover_points)


def detect_loss_spikes(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """`loss_spike` findings over the real (unmasked, finite) training loss: one per spike or storm."""
    if LOSS not in metrics or is_preference_log(metrics):
        return []
    restarts = lr_restart_steps(metrics)
    findings, incidents = [], []
    for spike in find_spikes(real_loss(metrics), loss_spike_rule(thresholds)):
        restart = restart_near(metrics[LOSS], spike.step, restarts, thresholds.spike_recover_points)
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
    message = (f"loss spikes to {fmt(spike.value)} at step {spike.step}, {spike.factor:.1f}x its recent "
               f"median {fmt(spike.baseline)}; {aftermath(spike)}.")
    return Finding("loss_spike", "warning", spike.step, message, end_step=_end(spike), metric=LOSS,
                   evidence=group_evidence([spike]))


def _phase_start(spike: Spike, restart: int) -> Finding:
    message = (f"loss jumps to {fmt(spike.value)} at step {spike.step} (from about {fmt(spike.baseline)}) "
               f"as the learning-rate schedule restarts at step {restart}: a new training phase, not an incident.")
    return Finding("loss_spike", "info", spike.step, message, end_step=_end(spike), metric=LOSS,
                   evidence=dict(group_evidence([spike]), lr_restart=restart))


def _storm(group: list[Spike]) -> Finding:
    big = largest(group)
    message = (f"loss spikes {len(group)} times from step {group[0].step} to {group[-1].end_step}, the largest "
               f"to {fmt(big.peak)} at step {big.peak_step} ({big.peak / big.baseline:.1f}x its recent median "
               f"{fmt(big.baseline)}); {aftermath(group[-1])}.")
    return Finding("loss_spike", "warning", group[0].step, message, end_step=group[-1].end_step, metric=LOSS,
                   evidence=dict(group_evidence(group), storm=True))
