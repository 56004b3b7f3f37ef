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
import weakref

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from .notation import elide

SEVERITY_COLORS = {"error": "#c62828", "warning": "#ef6c00", "info": "#757575"}
CHECKPOINT_COLORS = {"ok": "#2e7d32", "nonfinite": "#c62828", "unreadable": "#9e9e9e", "empty": "#9e9e9e"}
METRIC_COLORS = {"loss": "#1565c0", "eval_loss": "#6a1b9a", "grad_norm": "#00838f", "learning_rate": "#5d4037"}
SHORT_LABELS = {
    "nonfinite_metric": "NaN/Inf", "masked_nan_loss": "masked NaN", "loss_collapse": "collapse",
    "grad_norm_spike": "grad spike", "loss_spike": "loss spike", "divergence": "divergence",
    "loss_scale_overflow": "overflow", "skipped_steps": "skipped", "nonfinite_weights": "bad weights",
}
ZOOM_POINTS = 10      # logged points shown on each side of the first incident
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
    fig = Figure(figsize=(11, 13 if first else 9), layout="constrained")
    ratios = [3, 3, 2, 0.7] + ([4.5] if first else [])
    grid = fig.add_gridspec(len(ratios), 1, height_ratios=ratios)
    ax_loss = fig.add_subplot(grid[0])
    axes = [ax_loss] + [fig.add_subplot(grid[i], sharex=ax_loss) for i in (1, 2, 3)]
    ax_loss, ax_grad, ax_lr, ax_ckpt = axes
    timeline = analysis.timeline
    masked = hidden_nan_steps(analysis)
    _draw_metric(ax_loss, timeline, "loss", masked=masked)
    _draw_metric(ax_loss, timeline, "eval_loss", style="o", primary=False)
    _draw_metric(ax_grad, timeline, "grad_norm", log=wants_log(timeline.series("grad_norm")))
    _draw_metric(ax_lr, timeline, "learning_rate")
    for ax in (ax_loss, ax_grad, ax_lr):
        _mark_findings(ax, analysis.findings)
    _finish_bands(ax_loss, ax_grad, ax_lr)
    _label_findings(ax_loss, analysis.findings, first)
    _draw_checkpoints(ax_ckpt, analysis)
    ax_ckpt.set_xlabel("step")
    _shared_legend(fig, ax_loss)
    if first:
        _draw_zoom(fig, grid[4], analysis, masked)
    return fig


LOG_MIN_DECADES = 1.5  # a log axis only when the values span at least this many decades


def wants_log(series) -> bool:
    """Log scale only where it shows something: positive values over more than LOG_MIN_DECADES decades."""
    values = series.to_numpy(dtype="float64")
    values = values[np.isfinite(values) & (values > 0)]
    return values.size > 1 and np.log10(values.max() / values.min()) >= LOG_MIN_DECADES


def hidden_nan_steps(analysis) -> np.ndarray:
    """Steps whose logged loss 0.0 is a NaN hidden by HF's filter (the masked_nan_loss findings' spans)."""
    loss = analysis.timeline.series("loss")
    steps = []
    for f in analysis.findings:
        if f.kind == "masked_nan_loss":
            end = f.end_step if f.end_step is not None else f.step
            window = loss[(loss.index >= f.step) & (loss.index <= end)]
            steps += window.index[window.to_numpy() == 0.0].tolist()
    return np.array(sorted(set(steps)), dtype="int64")


def _draw_metric(ax, timeline, metric, log=False, style="-", primary=True, masked=None) -> None:
    """One metric: the final history solid, abandoned attempts dashed, non-finite values on the band.

    A secondary metric (eval_loss on the loss panel) gets a small legend instead of the axis label.
    `masked`: steps whose logged value stands for a hidden NaN; they go on the band, not on the line.
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
    _plot_values(ax, series.index.to_numpy(), series.to_numpy(), log, color, style, metric, masked=masked)
    for _, rows in _abandoned_rows(timeline, metric):
        _plot_values(ax, rows["step"].to_numpy(), rows["value"].to_numpy(dtype="float64"), log, "#9e9e9e",
                     "--", "abandoned attempt", alpha=0.6)


def _abandoned_rows(timeline, metric):
    frame = timeline.frame
    rows = frame[(frame["metric"] == metric) & frame["abandoned"]]
    return rows.sort_values("step").groupby("segment", sort=True)


BAND = 0.9  # values are drawn below this fraction of a panel's height; the band above holds what has no value


def _plot_values(ax, steps, values, log, color, style, label, alpha=1.0, masked=None) -> None:
    """Plot finite values (breaking the line at gaps); what has no value goes on the band at the top.

    The band, above the data, holds NaN, +Inf, -Inf, values a log axis cannot show, and masked
    points (a logged 0.0 that stands for a NaN loss): each a marker of its own, never a value.
    """
    order = np.argsort(steps, kind="stable")
    steps, values = steps[order], values[order]
    hidden = np.isin(steps, masked) if masked is not None and len(masked) else np.zeros(len(steps), bool)
    shown = np.isfinite(values) & ((values > 0) if log else True) & ~hidden
    drawn = np.where(shown, values, np.nan)  # NaN breaks the line where a value cannot be drawn
    if style == "o":
        ax.plot(steps, drawn, "o", ms=3, color=color, alpha=alpha, label=label)
    else:
        ax.plot(steps, drawn, style, lw=1.2, color=color, alpha=alpha, label=label)
    marks = [
        (np.isnan(values) & ~hidden, "v", "#c62828", "NaN (band)"),
        (np.isposinf(values), "^", "#7f0000", "+Inf (band)"),
        (np.isneginf(values), "v", "#7f0000", "-Inf (band)"),
        (hidden, "X", "#6a1b9a", "NaN logged as 0.0 (band)"),
        (np.isfinite(values) & (values <= 0) & ~hidden if log else np.zeros(len(values), bool), "s", "#ef6c00",
         "0 or below on a log axis (band)"),
    ]
    if any(mask.any() for mask, _, _, _ in marks):
        _BANDED.add(ax)
        band = ax.get_xaxis_transform()  # x in data, y in axes fraction
        for mask, marker, mcolor, mlabel in marks:
            if mask.any():
                ax.plot(steps[mask], np.full(mask.sum(), (1 + BAND) / 2), marker, ms=6, color=mcolor, alpha=alpha,
                        transform=band, clip_on=False, zorder=5, label=mlabel)


_BANDED: "weakref.WeakSet" = weakref.WeakSet()  # panels that have points on the band, to shade when drawn


def _finish_bands(*axes) -> None:
    """Shade the band at the top of each panel that uses it and lift the y-limit so the data stays below it."""
    for ax in axes:
        if ax not in _BANDED:
            continue
        ax.add_patch(Rectangle((0, BAND), 1, 1 - BAND, transform=ax.transAxes, color="#eeeeee", zorder=0, lw=0))
        lo, hi = ax.get_ylim()
        if ax.get_yscale() == "log" and lo > 0:
            ax.set_ylim(lo, lo * (hi / lo) ** (1 / BAND))
        else:
            ax.set_ylim(lo, lo + (hi - lo) / BAND)


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
                Line2D([], [], color="#c62828", marker="v", ls="", label="NaN (grey band)"),
                Line2D([], [], color="#7f0000", marker="^", ls="", label="Inf (grey band)"),
                Line2D([], [], color="#6a1b9a", marker="X", ls="", label="loss logged 0.0 for a NaN (grey band)"),
                Line2D([], [], color="#ef6c00", marker="s", ls="", label="0 or below on a log axis (grey band)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)


def _draw_zoom(fig, cell, analysis, masked) -> None:
    """Loss and grad_norm around the first incident, one panel each, scaled to the window's own values."""
    first = analysis.first_incident
    lo, hi = _zoom_window(analysis.timeline, first)
    sub = cell.subgridspec(2, 1, hspace=0.08)
    ax_loss = fig.add_subplot(sub[0])
    ax_grad = fig.add_subplot(sub[1], sharex=ax_loss)
    ax_loss.set_title(f"Zoom: steps {lo} to {hi}, around the first incident "
                      f"({SHORT_LABELS.get(first.kind, first.kind)} at step {first.step})",
                      fontsize=10, loc="left", parse_math=False)
    for ax, metric in ((ax_loss, "loss"), (ax_grad, "grad_norm")):
        series = analysis.timeline.series(metric)
        series = series[(series.index >= lo) & (series.index <= hi)]
        ax.set_ylabel(metric, color=METRIC_COLORS[metric])
        if series.empty:
            ax.text(0.5, 0.5, f"{metric} was not logged here", transform=ax.transAxes, ha="center", color="#888")
            continue
        log = metric == "grad_norm" and wants_log(series)
        if log:
            ax.set_yscale("log")
        _plot_values(ax, series.index.to_numpy(), series.to_numpy(), log, METRIC_COLORS[metric], ".-", metric,
                     masked=masked if metric == "loss" else None)
        ax.axvline(first.step, color=SEVERITY_COLORS.get(first.severity, "#757575"), lw=1.5, zorder=2)
        _finish_bands(ax)
    ax_loss.annotate(f"first incident: step {first.step}", (first.step, 0.02), xycoords=ax_loss.get_xaxis_transform(),
                     xytext=(4, 0), textcoords="offset points", fontsize=8, parse_math=False)
    ax_grad.set_xlim(lo - 0.5, hi + 0.5)
    ax_grad.set_xlabel("step")


def _zoom_window(timeline, first) -> tuple[int, int]:
    """ZOOM_POINTS logged steps either side of where the incident starts (a long span is not followed)."""
    steps = np.unique(timeline.final()["step"].to_numpy()) if len(timeline) else np.array([], dtype=int)
    if not len(steps):
        return first.step - 1, first.step + 1
    i = int(np.searchsorted(steps, first.step))
    lo = steps[max(i - ZOOM_POINTS, 0)]
    hi = steps[min(i + ZOOM_POINTS, len(steps) - 1)]
    return int(min(lo, first.step)), int(max(hi, first.step + 1))
