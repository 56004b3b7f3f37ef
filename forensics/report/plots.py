"""The report's plots: matplotlib Figures built without pyplot, and their PNG data URIs.

`main_figure(analysis)`: loss, grad_norm (log) and learning rate against step, with findings,
checkpoints, abandoned attempts and non-finite points marked, and a zoom on the first incident.
(The damage map, blocks x checkpoints, lives in damage.py.)
`figure_data_uri(fig)`: the Figure as a `data:image/png;base64,...` URI for the page.

PNG rather than inline SVG: its size does not grow with the number of points, and no text
from a run's files ends up in the page's markup. Text from files (checkpoint names) is drawn
with `parse_math=False` so a `$` in a name is not read as mathtext.
"""
from __future__ import annotations

import base64
import io

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .notation import elide

SEVERITY_COLORS = {"error": "#c62828", "warning": "#ef6c00", "info": "#757575"}
CHECKPOINT_COLORS = {"ok": "#2e7d32", "nonfinite": "#c62828", "unreadable": "#9e9e9e", "empty": "#9e9e9e"}
METRIC_COLORS = {"loss": "#1565c0", "eval_loss": "#6a1b9a", "grad_norm": "#00838f", "learning_rate": "#5d4037"}
SHORT_LABELS = {
    "nonfinite_metric": "NaN/Inf", "masked_nan_loss": "masked NaN", "loss_collapse": "collapse",
    "grad_norm_spike": "grad spike", "loss_spike": "loss spike", "divergence": "divergence",
    "loss_scale_overflow": "overflow", "skipped_steps": "skipped", "nonfinite_weights": "bad weights",
}
ZOOM_POINTS = 15      # logged points shown on each side of the first incident
MAX_MARKED = 200      # findings drawn as lines; beyond that the plot turns to noise
DPI = 90


def figure_data_uri(fig: Figure, dpi: int = DPI) -> str:
    """The figure as a PNG `data:` URI (returns a str ready for an <img src>)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def main_figure(analysis) -> Figure:
    """Loss, grad_norm and learning rate against step, everything that happened marked on them.

    Returns a Figure with four step-aligned panels (loss, grad_norm, learning rate, checkpoints)
    and, when there is a first incident, a zoomed panel around it.
    """
    first = analysis.first_incident
    fig = Figure(figsize=(11, 12 if first else 9), layout="constrained")
    ratios = [3, 3, 2, 0.7] + ([3.2] if first else [])
    grid = fig.add_gridspec(len(ratios), 1, height_ratios=ratios)
    ax_loss = fig.add_subplot(grid[0])
    axes = [ax_loss] + [fig.add_subplot(grid[i], sharex=ax_loss) for i in (1, 2, 3)]
    ax_loss, ax_grad, ax_lr, ax_ckpt = axes
    timeline = analysis.timeline
    _draw_metric(ax_loss, timeline, "loss")
    _draw_metric(ax_loss, timeline, "eval_loss", style="o", primary=False)
    _draw_metric(ax_grad, timeline, "grad_norm", log=True)
    _draw_metric(ax_lr, timeline, "learning_rate")
    for ax in (ax_loss, ax_grad, ax_lr):
        _mark_findings(ax, analysis.findings)
    _label_findings(ax_loss, analysis.findings, first)
    _draw_checkpoints(ax_ckpt, analysis)
    ax_ckpt.set_xlabel("step")
    _shared_legend(fig, ax_loss)
    if first:
        _draw_zoom(fig.add_subplot(grid[4]), analysis)
    return fig


def _draw_metric(ax, timeline, metric, log=False, style="-", primary=True) -> None:
    """One metric: the final history solid, abandoned attempts dashed, non-finite values as edge marks.

    A secondary metric (eval_loss on the loss panel) gets a small legend instead of the axis label.
    """
    series = timeline.series(metric)
    color = METRIC_COLORS.get(metric, "#333333")
    if primary:
        ax.set_ylabel(metric)
    if log:
        ax.set_yscale("log")
    if not primary and not series.empty:
        ax.legend(handles=[Line2D([], [], color=color, marker="o", ls="", label=metric)], fontsize=8,
                  loc="upper right")
    if series.empty:
        if primary:
            ax.text(0.5, 0.5, f"{metric} was not logged", transform=ax.transAxes, ha="center", color="#888")
        return
    _plot_values(ax, series.index.to_numpy(), series.to_numpy(), log, color, style, metric)
    for _, rows in _abandoned_rows(timeline, metric):
        _plot_values(ax, rows["step"].to_numpy(), rows["value"].to_numpy(dtype="float64"), log, "#9e9e9e",
                     "--", "abandoned attempt", alpha=0.6)


def _abandoned_rows(timeline, metric):
    frame = timeline.frame
    rows = frame[(frame["metric"] == metric) & frame["abandoned"]]
    return rows.sort_values("step").groupby("segment", sort=True)


def _plot_values(ax, steps, values, log, color, style, label, alpha=1.0) -> None:
    """Plot finite values (breaking the line at gaps); mark the rest on the axis edges."""
    order = np.argsort(steps, kind="stable")
    steps, values = steps[order], values[order]
    shown = np.isfinite(values) & ((values > 0) if log else True)
    drawn = np.where(shown, values, np.nan)  # NaN breaks the line where a value cannot be drawn
    if style == "o":
        ax.plot(steps, drawn, "o", ms=3, color=color, alpha=alpha, label=label)
    else:
        ax.plot(steps, drawn, style, lw=1.2, color=color, alpha=alpha, label=label)
    edge = ax.get_xaxis_transform()  # x in data, y in axes fraction: the marks sit on the frame
    marks = [
        (np.isnan(values), 1.0, "v", "#c62828", "NaN (top edge)"),
        (np.isposinf(values), 1.0, "^", "#7f0000", "+Inf (top edge)"),
        (np.isneginf(values), 0.0, "v", "#7f0000", "-Inf (bottom edge)"),
        (np.isfinite(values) & (values <= 0) if log else np.zeros(len(values), bool),
         0.0, "s", "#ef6c00", "0 or below on a log axis (bottom edge)"),
    ]
    for mask, y, marker, mcolor, mlabel in marks:
        if mask.any():
            ax.plot(steps[mask], np.full(mask.sum(), y), marker, ms=6, color=mcolor, alpha=alpha,
                    transform=edge, clip_on=False, label=mlabel, zorder=5)


def _mark_findings(ax, findings) -> None:
    """A vertical line at each finding, coloured by severity; dotted when in an abandoned attempt."""
    for f in findings[:MAX_MARKED]:
        color = SEVERITY_COLORS.get(f.severity, "#757575")
        ax.axvline(f.step, color=color, lw=0.9, ls=":" if f.abandoned else "-", alpha=0.7, zorder=1)
        if f.end_step is not None and f.end_step > f.step:
            ax.axvspan(f.step, f.end_step, color=color, alpha=0.06, zorder=0)


def _label_findings(ax, findings, first, max_labels=12) -> None:
    """Short labels above the top panel; findings close together share one label."""
    groups = _group_close(findings[:MAX_MARKED], ax)
    for step, kinds in groups[:max_labels]:
        text = ", ".join(dict.fromkeys(SHORT_LABELS.get(k, k) for k in kinds))
        bold = first is not None and step == first.step
        ax.annotate(text, (step, 1.0), xycoords=ax.get_xaxis_transform(), xytext=(0, 4),
                    textcoords="offset points", rotation=30, fontsize=8, ha="left", va="bottom",
                    fontweight="bold" if bold else "normal", parse_math=False, annotation_clip=False)


def _group_close(findings, ax) -> list[tuple[int, list[str]]]:
    if not findings:
        return []
    steps = [f.step for f in findings]
    span = max(max(steps) - min(steps), 1)
    lo, hi = ax.get_xlim() if ax.has_data() else (min(steps), max(steps))
    gap = max(hi - lo, span) * 0.03
    groups: list[tuple[int, list[str]]] = []
    for f in findings:
        if groups and f.step - groups[-1][0] <= gap:
            groups[-1][1].append(f.kind)
        else:
            groups.append((f.step, [f.kind]))
    return groups


def _draw_checkpoints(ax, analysis) -> None:
    """A strip of ticks: green for a good checkpoint, red for a damaged one, grey when unreadable."""
    ax.set_yticks([])
    ax.set_ylabel("ckpts", rotation=0, ha="right", va="center")
    ax.set_ylim(0, 1)
    placed = [c for c in analysis.checkpoints if c.step is not None]
    if not placed:
        ax.text(0.5, 0.5, "no checkpoints checked", transform=ax.transAxes, ha="center", va="center", color="#888")
        return
    for c in placed:
        ax.plot([c.step], [0.5], "|", ms=18, mew=3, color=CHECKPOINT_COLORS.get(c.status, "#9e9e9e"))
    for c, word in ((analysis.last_good_checkpoint, "last good"), (analysis.first_bad_checkpoint, "first bad")):
        if c is not None and c.step is not None:
            ax.annotate(f"{word}: {elide(c.name)}", (c.step, 0.5), xytext=(6, 0), textcoords="offset points",
                        fontsize=8, va="center", parse_math=False, color=CHECKPOINT_COLORS[c.status])


def _shared_legend(fig, ax_top) -> None:
    handles = [Line2D([], [], color=c, lw=2, label=s) for s, c in SEVERITY_COLORS.items()]
    handles += [Line2D([], [], color=CHECKPOINT_COLORS["ok"], marker="|", ls="", ms=10, mew=3, label="good ckpt"),
                Line2D([], [], color=CHECKPOINT_COLORS["nonfinite"], marker="|", ls="", ms=10, mew=3,
                       label="damaged ckpt"),
                Line2D([], [], color="#9e9e9e", ls="--", label="abandoned attempt"),
                Line2D([], [], color="#c62828", marker="v", ls="", label="NaN (on the edge)"),
                Line2D([], [], color="#7f0000", marker="^", ls="", label="Inf (on the edge)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)


def _draw_zoom(ax, analysis) -> None:
    """Loss (left axis) and grad_norm (right, log) around the first incident."""
    first = analysis.first_incident
    lo, hi = _zoom_window(analysis.timeline, first)
    timeline = analysis.timeline
    # Padded so the finding labels above the panel do not run into the title.
    ax.set_title(f"Around the first incident (step {first.step})", fontsize=10, loc="left", pad=42)
    for metric, axis, log in (("loss", ax, False), ("grad_norm", ax.twinx(), True)):
        series = timeline.series(metric)
        series = series[(series.index >= lo) & (series.index <= hi)]
        axis.set_ylabel(metric, color=METRIC_COLORS[metric])
        if log:
            axis.set_yscale("log")
        if not series.empty:
            _plot_values(axis, series.index.to_numpy(), series.to_numpy(), log, METRIC_COLORS[metric], ".-", metric)
    inside = [f for f in analysis.findings if lo <= f.step <= hi]
    _mark_findings(ax, inside)
    ax.set_xlim(lo - 0.5, hi + 0.5)
    _label_findings(ax, inside, first, max_labels=8)
    ax.set_xlabel("step")


def _zoom_window(timeline, first) -> tuple[int, int]:
    """ZOOM_POINTS logged steps either side of where the incident starts (a long span is not followed)."""
    steps = np.unique(timeline.final()["step"].to_numpy()) if len(timeline) else np.array([], dtype=int)
    if not len(steps):
        return first.step - 1, first.step + 1
    i = int(np.searchsorted(steps, first.step))
    lo = steps[max(i - ZOOM_POINTS, 0)]
    hi = steps[min(i + ZOOM_POINTS, len(steps) - 1)]
    return int(min(lo, first.step)), int(max(hi, first.step + 1))
