"""The text report: plain-text renderings for the terminal, short, readable, one screen.

The CLI prints these; the HTML report beside it (`html.py`) tells the same story as a page.
"""
from __future__ import annotations

import math
from typing import Iterable

import pandas as pd

from ..checkpoints.blocks import block_sort_key
from ..timeline import Timeline
from .story import Story, build_story

def analysis_text(analysis) -> str:
    """The verdict, the four answers, one line per skipped file, and where to look next."""
    skipped = [f"skipped {s.path}: {s.reason}" for s in analysis.skipped]
    return story_text(build_story(analysis), notes=skipped)


def story_text(story: Story, notes: Iterable[str] = ()) -> str:
    """The story as plain text lines (what a terminal shows); `notes` go just before the next step."""
    lines = [f"{story.verdict.upper()}: {story.headline}"]
    for title, body in story.sections():
        if body:
            lines += ["", title] + [f"  {line}" for line in body]
    notes = list(notes)
    if notes:
        lines += [""] + notes
    if story.next_step:
        lines += ["", story.next_step]
    return "\n".join(lines) + "\n"


def timeline_text(timeline: Timeline, wide: bool = False, rows: int = 20) -> str:
    """A summary of the timeline: its segments and the first and last rows."""
    lines = [f"{len(timeline.frame)} points, {len(timeline.metrics)} metrics: {', '.join(timeline.metrics[:12])}"
             + (" ..." if len(timeline.metrics) > 12 else "")]
    for seg in timeline.segments:
        tail = f" (abandoned from step {seg.abandoned_from_step})" if seg.abandoned else ""
        lines.append(f"  segment {seg.id}: {seg.source} [{seg.format}] steps {seg.first_step}-{seg.last_step}{tail}")
    table = timeline.wide() if wide else timeline.frame
    if len(table):
        with pd.option_context("display.width", 160, "display.max_columns", 12):
            lines.append(table.head(rows // 2).to_string())
            if len(table) > rows // 2:
                lines.append("...")
                lines.append(table.tail(rows // 2).to_string(header=False))
    return "\n".join(lines)


def scan_text(stats: pd.DataFrame, checkpoint, rows: int = 15) -> str:
    """Totals, the non-finite tensors and blocks, and the tensors with the least FP16 headroom."""
    if stats.empty:
        return f"{checkpoint}: no tensors"
    n_bad = stats[(stats["n_nan"] > 0) | (stats["n_inf"] > 0)]
    lines = [f"{checkpoint}: {len(stats)} tensors, {int(stats['numel'].sum()):,} values"]
    if len(n_bad):
        blocks = sorted({b for b in n_bad["block"] if isinstance(b, str)}, key=block_sort_key)
        lines.append(f"NON-FINITE: {len(n_bad)} tensors hold NaN/Inf"
                     + (f" in blocks {', '.join(blocks)}" if blocks else ""))
        cols = ["name", "dtype", "n_nan", "n_inf", "absmax"]
        lines.append(n_bad[cols].head(rows).to_string(index=False))
    else:
        lines.append("all values finite")
    lines.append("largest magnitudes:")
    top = stats.sort_values("absmax", ascending=False).head(min(rows, 5))
    lines.append(top[["name", "dtype", "absmax", "l2", "std", "fp16_headroom"]].to_string(index=False))
    return "\n".join(lines)


def diff_text(changes: pd.DataFrame, a, b, top: int = 20) -> str:
    """The tensors that moved most between two checkpoints and those that became non-finite."""
    if changes.empty:
        return f"{a} -> {b}: no tensor in common"
    lines = [f"{a} -> {b}: {len(changes)} tensors compared"]
    if "became_nonfinite" in changes:
        went_bad = changes[changes["became_nonfinite"]]
        if len(went_bad):
            lines.append(f"{len(went_bad)} tensors became non-finite")
    shown = changes.head(top)
    # A tensor that went NaN/Inf has no finite relative change: say what happened instead of "inf".
    change = [("NaN/Inf" if bad else f"{rel:.3g}") for rel, bad in zip(shown["rel_change"], shown["became_nonfinite"])]
    table = pd.DataFrame({"tensor": shown["tensor"], "block": shown["block"].fillna("-"), "change": change})
    lines.append(table.to_string(index=False))
    return "\n".join(lines)


def bisect_text(data: dict) -> str:
    """The bisect verdict from its JSON form: last good, first bad, what broke, what the logs say."""
    lines = []
    good, bad = data.get("last_good"), data.get("first_bad")
    lines.append(f"last good: {_ckpt(good)}")
    lines.append(f"first bad: {_ckpt(bad)}")
    if bad:
        blocks = bad.get("nonfinite_blocks") or []
        tensors = bad.get("nonfinite_tensors") or []
        lines.append(f"  {len(tensors)} non-finite tensors" + (f" in {', '.join(blocks)}" if blocks else ""))
    probed = data.get("probed") or []
    lines.append("probed: " + ", ".join(f"{p['name']}={p['verdict']}" for p in probed))
    window = data.get("window") or {}
    findings = data.get("findings") or []
    if findings:
        lines.append(f"in steps {window.get('from_step')}..{window.get('to_step')} the logs show:")
        lines.extend(f"  step {f['step']}: {f['message']}" for f in findings)
    changes = data.get("changes") or []
    if changes:
        lines.append("largest changes:")
        for c in changes[:10]:
            rel = c.get("rel_change")
            rel_text = f"{rel:.3g}" if isinstance(rel, float) and math.isfinite(rel) else str(rel)
            lines.append(f"  {c.get('tensor')}  rel_change={rel_text}")
    return "\n".join(lines)


def _ckpt(c) -> str:
    if not c:
        return "none"
    return f"{c['name']} (step {c['step']})"

