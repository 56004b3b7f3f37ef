"""Spike episodes (see `spikes`) turned into findings, the same way for every metric.

A jump at a learning-rate restart is a new training phase (info); several spikes in a row
(`spike_storm_count`, each within `spike_storm_gap` points of the last) are one storm finding
named by its largest spike; any other spike is a warning of its own. `as_info` makes one info where a
detector's rule finds it no incident.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..config import Thresholds
from ..findings import Finding
from .metrics import Metrics, format_number, lr_restart_steps, restart_near
from .spikes import Spike, aftermath, group_evidence, group_spikes, largest


def spike_findings(kind: str, metric: str, series: pd.Series, spikes: list[Spike], metrics: Metrics,
                   thresholds: Thresholds, warn_factor: float = 0.0) -> list[Finding]:
    """Findings of `kind` for the spikes found in `series` (the logged `metric`).

    A lone spike that settles at once and stays under `warn_factor` x its baseline is info, not a warning.
    """
    restarts = lr_restart_steps(metrics)
    findings, incidents = [], []
    for spike in spikes:
        restart = restart_near(series, spike.step, restarts, thresholds.spike_recover_points)
        if restart is None:
            incidents.append(spike)
        else:
            findings.append(_phase_start(kind, metric, spike, restart))
    for group in group_spikes(incidents, thresholds.spike_storm_gap):
        if len(group) >= thresholds.spike_storm_count:
            findings.append(_storm(kind, metric, group))
        else:
            findings.extend(_single(kind, metric, s, warn_factor) for s in group)
    return findings


def _end(spike: Spike) -> int | None:
    return spike.end_step if spike.end_step != spike.step else None


def _factor(value: float) -> str:
    # A 3x loss spike needs its decimal; a 1000x grad_norm spike does not.
    return f"{value:.1f}x" if value < 10 else f"{value:.0f}x"


def _single(kind: str, metric: str, spike: Spike, warn_factor: float) -> Finding:
    peak = f", peak {format_number(spike.peak)} at step {spike.peak_step}" if spike.peak_step != spike.step else ""
    message = (f"{metric} spikes to {format_number(spike.value)} at step {spike.step}, {_factor(spike.factor)} its "
               f"recent median {format_number(spike.baseline)}{peak}; {aftermath(spike)}.")
    # Long healthy runs logged every step have the odd batch whose grad_norm is a few times the
    # median; one that settles at once is worth showing, not worth a warning.
    bump = spike.recovered and spike.peak / spike.baseline < warn_factor
    return Finding(kind, "info" if bump else "warning", spike.step, message, end_step=_end(spike), metric=metric,
                   evidence=group_evidence([spike]))


def _phase_start(kind: str, metric: str, spike: Spike, restart: int) -> Finding:
    message = (f"{metric} jumps to {format_number(spike.value)} at step {spike.step} (from about "
               f"{format_number(spike.baseline)}) as the learning-rate schedule restarts at step {restart}: a new "
               f"training phase, not an incident.")
    return Finding(kind, "info", spike.step, message, end_step=_end(spike), metric=metric,
                   evidence=dict(group_evidence([spike]), lr_restart=restart))


def _storm(kind: str, metric: str, group: list[Spike]) -> Finding:
    big = largest(group)
    message = (f"{metric} spikes {len(group)} times from step {group[0].step} to {group[-1].end_step}, "
               f"the largest to {format_number(big.peak)} at step {big.peak_step} ({_factor(big.peak / big.baseline)} "
               f"its recent median {format_number(big.baseline)}); {aftermath(group[-1])}.")
    return Finding(kind, "warning", group[0].step, message, end_step=group[-1].end_step, metric=metric,
                   evidence=dict(group_evidence(group), storm=True))


def as_info(finding: Finding, note: str, **evidence) -> Finding:
    """The finding made info, `note` (why it is no incident) added to its message and `evidence` to its numbers."""
    return replace(finding, severity="info", message=finding.message.rstrip(".") + note + ".",
                   evidence={**finding.evidence, **evidence})
