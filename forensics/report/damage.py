"""The damage map: which blocks of which checkpoints hold NaN/Inf, and how large the rest are.

`damage_matrix(checkpoints)` reduces per-checkpoint results to a blocks x checkpoints grid of
states (not scanned / finite without stats / finite with stats / non-finite) and magnitudes
(the block's absmax where a full scan gave stats). `damage_map_figure(analysis)` draws it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import LogNorm, to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..checkpoints.blocks import block_sort_key
from .notation import elide

NOT_SCANNED, FINITE_NO_STATS, FINITE, NONFINITE = 0, 1, 2, 3
STATE_COLORS = {NOT_SCANNED: "#eeeeee", FINITE_NO_STATS: "#a5d6a7", NONFINITE: "#c62828"}
STATE_LABELS = {NOT_SCANNED: "not scanned", FINITE_NO_STATS: "finite (quick check, no stats)",
                NONFINITE: "NaN / Inf"}
MAGNITUDE_CMAP = "Blues"


@dataclass(frozen=True)
class DamageMatrix:
    """Blocks x checkpoints: `states[i, j]` and `absmax[i, j]` (NaN where no stats) for blocks[i], columns[j]."""

    blocks: list[str]
    columns: list[str]
    states: np.ndarray
    absmax: np.ndarray


def damage_matrix(checkpoints) -> DamageMatrix | None:
    """The grid for `checkpoints` (in step order), or None when no block is known in any of them."""
    per_ckpt = [_block_view(c) for c in checkpoints]
    blocks = sorted({b for view, _ in per_ckpt for b in view}, key=block_sort_key)
    if not blocks:
        return None
    states = np.full((len(blocks), len(checkpoints)), NOT_SCANNED, dtype=int)
    absmax = np.full(states.shape, np.nan)
    row = {b: i for i, b in enumerate(blocks)}
    for j, (view, default) in enumerate(per_ckpt):
        states[:, j] = default
        for block, (state, magnitude) in view.items():
            states[row[block], j] = state
            absmax[row[block], j] = magnitude
    return DamageMatrix(blocks, [c.name for c in checkpoints], states, absmax)


def _row_key(block, name) -> str:
    """Tensors outside any block (embeddings, norms, head) get a row of their own."""
    if isinstance(block, str) and block:
        return block
    return str(name)


def _block_view(ckpt) -> tuple[dict[str, tuple[int, float]], int]:
    """{block: (state, absmax)} for one checkpoint, and the state of blocks it does not name."""
    if ckpt.status in ("unreadable", "empty"):
        return {}, NOT_SCANNED
    if ckpt.stats is not None and len(ckpt.stats):
        return _view_from_stats(ckpt.stats), NOT_SCANNED
    view = {b: (NONFINITE, math.nan) for b in ckpt.nonfinite_blocks}
    # A quick check of a good checkpoint read every tensor; of a bad one it may have stopped early.
    default = FINITE_NO_STATS if (ckpt.status == "ok" or ckpt.full_scan) else NOT_SCANNED
    return view, default


def _view_from_stats(stats) -> dict[str, tuple[int, float]]:
    keys = [_row_key(b, n) for b, n in zip(stats["block"], stats["name"])]
    bad = (stats["n_nan"].fillna(0).to_numpy() + stats["n_inf"].fillna(0).to_numpy()) > 0
    absmax = stats["absmax"].to_numpy(dtype="float64")
    view: dict[str, tuple[int, float]] = {}
    for key, is_bad, amax in zip(keys, bad, absmax):
        state, prev = view.get(key, (FINITE, math.nan))
        state = NONFINITE if is_bad else state
        view[key] = (state, np.nanmax([prev, amax]) if np.isfinite([prev, amax]).any() else math.nan)
    return view


def damage_map_figure(analysis) -> Figure | None:
    """Blocks (rows, natural order) x checkpoints (columns, by step), or None when nothing is known.

    Red cells hold NaN/Inf; blue cells are finite, darker for a larger absmax; green cells
    passed a quick check without stats; grey cells were not scanned.
    """
    matrix = damage_matrix(analysis.checkpoints) if analysis.checkpoints else None
    if matrix is None:
        return None
    rows, cols = matrix.states.shape
    fig = Figure(figsize=(min(3 + 0.55 * cols, 14), min(2 + 0.2 * rows, 22)), layout="constrained")
    ax = fig.add_subplot()
    norm = _magnitude_norm(matrix)
    ax.imshow(_cell_colors(matrix, norm), aspect="auto", interpolation="nearest")
    _set_labels(ax, matrix)
    handles = [Patch(color=STATE_COLORS[s], label=STATE_LABELS[s]) for s in (NONFINITE, FINITE_NO_STATS, NOT_SCANNED)]
    if norm is not None:
        fig.colorbar(ScalarMappable(norm=norm, cmap=MAGNITUDE_CMAP), ax=ax, label="block absmax (finite values)",
                     shrink=0.6)
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    ax.set_title("Damage map: blocks x checkpoints", fontsize=10, loc="left")
    return fig


def _magnitude_norm(matrix: DamageMatrix) -> LogNorm | None:
    finite = matrix.absmax[(matrix.states == FINITE) & np.isfinite(matrix.absmax) & (matrix.absmax > 0)]
    if finite.size == 0:
        return None
    lo, hi = float(finite.min()), float(finite.max())
    return LogNorm(vmin=lo, vmax=hi if hi > lo else lo * 10)


def _cell_colors(matrix: DamageMatrix, norm) -> np.ndarray:
    """RGBA image: categorical colours, with finite-with-stats cells shaded by absmax."""
    image = np.zeros(matrix.states.shape + (4,))
    for state, color in STATE_COLORS.items():
        image[matrix.states == state] = to_rgba(color)
    with_stats = matrix.states == FINITE
    image[with_stats] = to_rgba("#bbdefb")
    if norm is not None:
        shaded = with_stats & np.isfinite(matrix.absmax) & (matrix.absmax > 0)
        mapper = ScalarMappable(norm=norm, cmap=MAGNITUDE_CMAP)
        image[shaded] = mapper.to_rgba(matrix.absmax[shaded])
    return image


def _set_labels(ax, matrix: DamageMatrix) -> None:
    """Tick labels from file names: drawn literally (no mathtext), thinned when there are many rows."""
    rows, cols = matrix.states.shape
    every = max(1, math.ceil(rows / 80))
    yticks = list(range(0, rows, every))
    ax.set_yticks(yticks, [elide(matrix.blocks[i], 40) for i in yticks], fontsize=7 if rows > 30 else 8)
    ax.set_xticks(range(cols), [elide(c) for c in matrix.columns], rotation=45, ha="right", fontsize=8)
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        label.set_parse_math(False)
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", lw=0.5)
    ax.tick_params(which="minor", length=0)
