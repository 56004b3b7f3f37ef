"""The picture of a bisect: every candidate checkpoint on a step axis, the probes in order, good and bad,
and under it the damage of the first bad checkpoint per block (how many of its tensors hold NaN/Inf)."""
from __future__ import annotations

from matplotlib.figure import Figure

from ..checkpoints.blocks import block_of, block_sort_key
from .plots import CHECKPOINT_COLORS

_VERDICT_COLORS = {"ok": CHECKPOINT_COLORS["ok"], "bad": CHECKPOINT_COLORS["nonfinite"], "unreadable": "#9e9e9e"}


def bisect_figure(result) -> Figure | None:
    """Probes on a step axis (numbered in probe order) and the first bad checkpoint's damaged blocks."""
    placed = [c for c in result.candidates if c.step is not None]
    if not placed:
        return None
    blocks = _damaged_blocks(result.first_bad)
    fig = Figure(figsize=(10, 2.6 + (0.22 * len(blocks) + 0.8 if blocks else 0)), layout="constrained")
    grid = fig.add_gridspec(2 if blocks else 1, 1, height_ratios=[2.2, 0.22 * len(blocks) + 0.8] if blocks else [1])
    ax = fig.add_subplot(grid[0])
    _draw_probes(ax, result, placed)
    if blocks:
        _draw_blocks(fig.add_subplot(grid[1]), blocks)
    return fig


def _draw_probes(ax, result, placed) -> None:
    ax.set_yticks([])
    ax.set_ylim(0, 1)
    ax.set_xlabel("step")
    ax.set_title("Checkpoints between the two given (grey: not opened); probes numbered in order", fontsize=10,
                 loc="left")
    ax.plot([c.step for c in placed], [0.5] * len(placed), "|", ms=22, mew=2, color="#bdbdbd")
    for i, (ref, verdict) in enumerate(result.probed, 1):
        if ref.step is None:
            continue
        color = _VERDICT_COLORS.get(verdict, "#9e9e9e")
        ax.plot([ref.step], [0.5], "|", ms=22, mew=4, color=color)
        ax.annotate(str(i), (ref.step, 0.72), ha="center", fontsize=8, color=color)
    lo, hi = result.window
    if lo is not None and hi is not None:
        ax.axvspan(lo, hi, color=CHECKPOINT_COLORS["nonfinite"], alpha=0.08)
        ax.annotate(f"broke between steps {lo} and {hi}", ((lo + hi) / 2, 0.18), ha="center", fontsize=9)
    for ref, word in ((result.last_good, "last good"), (result.first_bad.ref if result.first_bad else None,
                                                         "first bad")):
        if ref is not None and ref.step is not None:
            ax.annotate(f"{word}\n{ref.name}", (ref.step, 0.95), ha="center", va="top", fontsize=8,
                        parse_math=False)


def _damaged_blocks(first_bad) -> list[tuple[str, int]]:
    if first_bad is None or not first_bad.nonfinite_tensors:
        return []
    counts: dict[str, int] = {}
    for name in first_bad.nonfinite_tensors:
        block = block_of(name) or name
        counts[block] = counts.get(block, 0) + 1
    return sorted(counts.items(), key=lambda kv: block_sort_key(kv[0]))


def _draw_blocks(ax, blocks) -> None:
    names = [b for b, _ in blocks]
    ax.barh(range(len(blocks)), [n for _, n in blocks], color=CHECKPOINT_COLORS["nonfinite"])
    ax.set_yticks(range(len(blocks)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("tensors holding NaN/Inf in the first bad checkpoint")
