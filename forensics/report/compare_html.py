"""The `forensics compare --html` page: verdicts side by side, ranked configuration differences,
where the runs part, and the shared metrics overlaid (PNG data URIs, no script; every value that
comes from a run's files is escaped by the template's autoescape).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..analyzers.parting import PARTING_METRICS
from .html import render_page, write_page
from .plots import figure_data_uri
from .tables import cell_text, setting_text

RUN_COLORS = ("#2e7d32", "#c62828", "#1565c0", "#6a1b9a", "#ef6c00", "#00838f")
_LOG_METRICS = {"grad_norm", "loss_scale"}


def overlay_figure(comparison) -> Figure | None:
    """One panel per shared metric, every run drawn on it, each parting point marked."""
    analyses = comparison.analyses
    metrics = [m for m in PARTING_METRICS if all(m in a.timeline.metrics for a in analyses)]
    if not metrics:
        return None
    fig = Figure(figsize=(10, 2.6 * len(metrics)))
    axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    for ax, metric in zip(axes, metrics):
        for i, analysis in enumerate(analyses):
            series = analysis.timeline.series(metric)
            values = series.to_numpy(dtype="float64")
            label = f"run {i + 1}: {Path(analysis.path).name}"
            ax.plot(series.index, np.where(np.isfinite(values), values, np.nan), lw=1.2,
                    color=RUN_COLORS[i % len(RUN_COLORS)], label=label)
            bad = ~np.isfinite(values)
            if bad.any():
                ax.plot(series.index[bad], np.ones(bad.sum()), "v", ms=6, color=RUN_COLORS[i % len(RUN_COLORS)],
                        transform=ax.get_xaxis_transform(), clip_on=False)
        for p in comparison.parted:
            if p.metric == metric:
                ax.axvline(p.step, color=RUN_COLORS[p.run % len(RUN_COLORS)], ls="--", lw=1)
        if metric in _LOG_METRICS and _positive(analyses, metric):
            ax.set_yscale("log")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("step (dashed: where a run parts from the reference; triangles: NaN/Inf)")
    fig.tight_layout()
    return fig


def _positive(analyses, metric) -> bool:
    values = np.concatenate([a.timeline.series(metric).to_numpy(dtype="float64") for a in analyses])
    finite = values[np.isfinite(values)]
    return finite.size > 0 and (finite > 0).all()


def compare_context(comparison) -> dict:
    fig = overlay_figure(comparison)
    return {
        "runs": [{"n": i + 1, "path": r.path, "status": r.status,
                  "first": (f"{r.first_incident['kind']} at step {r.first_incident['step']}"
                            if r.first_incident else "none"),
                  "profile": _profile_line(r.run_profile), "reference": i == comparison.reference}
                 for i, r in enumerate(comparison.runs)],
        "diff": [{"key": d.key, "risk": d.risk, "why": d.why,
                  "cells": [setting_text(v, i in d.not_recorded) for i, v in enumerate(d.values)]}
                 for d in comparison.config_diff],
        "parted": [{"metric": p.metric, "run": p.run + 1, "reference": p.reference + 1, "step": cell_text(p.step),
                    "axis": p.axis, "value": cell_text(p.value), "reference_value": cell_text(p.reference_value),
                    "band": f"{cell_text(p.band[0])} .. {cell_text(p.band[1])}"} for p in comparison.parted],
        "blocks": [{k: cell_text(v) for k, v in row.items()}
                   for row in comparison.block_diff.to_dict(orient="records")],
        "overlay": figure_data_uri(fig) if fig is not None else None,
    }


def _profile_line(profile: dict | None) -> str:
    if not profile:
        return "unknown"
    keys = ("method", "objective", "precision", "framework")
    return ", ".join(f"{k} {profile.get(k)}" for k in keys if profile.get(k) not in (None, "unknown")) or "unknown"


def render_compare_html(comparison, fragment: bool = False) -> str:
    """The compare page as one self-contained HTML string (`fragment=True`: the body only, for a notebook)."""
    name = "compare_body.html" if fragment else "compare.html"
    return render_page(name, "forensics compare", c=compare_context(comparison))


def write_compare_html(comparison, path) -> Path:
    """Write the compare page to `path` and return the path written."""
    return write_page(render_compare_html(comparison), path)
