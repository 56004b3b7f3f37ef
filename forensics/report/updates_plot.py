"""Heat maps of where the weights were heading: per block, over checkpoints.

Panels, each where its data exists: the update ratio per step between consecutive checkpoints
(‖W2−W1‖/‖W1‖ ÷ steps, from `Analysis.updates`); when optimizer states were saved, Adam's own
per-step update ratio lr·‖u + wd·W‖/‖W‖ and the RMS of its second moment at each checkpoint; and
each layer's attention-logit bound over its value at the first checkpoint. All on log colour
scales, blocks as rows; the precursor's cell is outlined. `updates_figure(analysis)` returns None
when there is nothing to draw.
"""
from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..checkpoints.blocks import module_sort_key
from .notation import elide

CMAP = "magma_r"


def update_grid(analysis) -> tuple[list[str], list[str], np.ndarray] | None:
    """(rows, columns, values): per-step update ratios between checkpoints, NaN where unknown."""
    steps = [u for u in analysis.updates if u.blocks]
    if not steps:
        return None
    rows = sorted({m for u in steps for m in u.blocks}, key=module_sort_key)
    grid = np.full((len(rows), len(steps)), np.nan)
    for j, u in enumerate(steps):
        for i, m in enumerate(rows):
            r = u.blocks.get(m, math.nan)
            grid[i, j] = r / u.steps if r == r and m not in u.nonfinite_blocks else math.nan
    return rows, [u.to_name for u in steps], grid


def optimizer_grid(analysis, column: str = "update_ratio") -> tuple[list[str], list[str], np.ndarray] | None:
    """(rows, columns, values): a per-block figure of the optimizer state (Adam's per-step update ratio, or
    `column` such as v_rms) at each checkpoint that kept its state."""
    kept = [c for c in analysis.checkpoints if c.optimizer is not None and not c.optimizer.blocks.empty]
    if not kept:
        return None
    rows = sorted({b for c in kept for b in c.optimizer.blocks["block"]}, key=module_sort_key)
    grid = np.full((len(rows), len(kept)), np.nan)
    for j, c in enumerate(kept):
        values = dict(zip(c.optimizer.blocks["block"], c.optimizer.blocks[column]))
        for i, b in enumerate(rows):
            grid[i, j] = values.get(b, math.nan)
    return rows, [c.name for c in kept], grid


def bound_grid(analysis) -> tuple[list[str], list[str], np.ndarray] | None:
    """(rows, columns, values): each layer's attention-logit bound over its value at the first checkpoint."""
    steps = [u for u in analysis.updates if u.attention_bound_to]
    if not steps:
        return None
    first = {**{m: v for u in reversed(steps) for m, v in u.attention_bound_from.items()}}
    rows = sorted(first, key=module_sort_key)
    grid = np.full((len(rows), len(steps)), np.nan)
    for j, u in enumerate(steps):
        for i, m in enumerate(rows):
            if m in u.attention_bound_to and first.get(m):
                grid[i, j] = u.attention_bound_to[m] / first[m]
    return rows, [u.to_name for u in steps], grid


def updates_figure(analysis) -> Figure | None:
    panels = (("weights moved per step, between checkpoints", update_grid(analysis), "update ratio per step"),
              ("Adam's next step, from the saved moments", optimizer_grid(analysis), "update ratio per step"),
              ("second-moment RMS (Adam's v)", optimizer_grid(analysis, "v_rms"), "RMS of v"),
              ("attention-logit bound, over its first value", bound_grid(analysis), "growth"))
    grids = [(title, g, label) for title, g, label in panels if g is not None]
    if not grids:
        return None
    height = max(len(g[0]) for _, g, _ in grids)
    ncols = min(2, len(grids))
    nrows = math.ceil(len(grids) / ncols)
    fig = Figure(figsize=(5.2 * ncols, nrows * (1.4 + 0.28 * height)), layout="constrained")
    precursor = next((f for f in analysis.findings if f.kind == "update_precursor"), None)
    for k, (title, (rows, cols, grid), label) in enumerate(grids):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        positive = grid[np.isfinite(grid) & (grid > 0)]
        if positive.size == 0:
            ax.set_axis_off()
            continue
        norm = LogNorm(vmin=positive.min(), vmax=max(positive.max(), positive.min() * 10))
        image = ax.imshow(np.where(grid > 0, grid, np.nan), aspect="auto", cmap=CMAP, norm=norm,
                          interpolation="nearest")
        ax.set_yticks(range(len(rows)), [elide(r, 28) for r in rows], fontsize=7)
        ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=7)
        ax.set_title(title, fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8, label=label)
        _outline(ax, precursor, rows, cols)
    return fig


def _outline(ax, precursor, rows: list[str], cols: list[str]) -> None:
    """A box around the precursor's cell, where this grid has it."""
    if precursor is None:
        return
    block, checkpoint = precursor.evidence.get("block"), precursor.evidence.get("checkpoint")
    if block in rows and checkpoint in cols:
        i, j = rows.index(block), cols.index(checkpoint)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#00b0ff", linewidth=2))
