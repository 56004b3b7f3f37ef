"""The terminal text of `forensics compare`: verdicts, the differences that matter, where runs part."""
from __future__ import annotations

from pathlib import Path

from .tables import cell_text, setting_text

MAX_ROWS = 12  # differences shown; the rest are counted (all of them are in --json and --html)


def comparison_text(comparison) -> str:
    lines = ["Runs:"]
    for i, r in enumerate(comparison.runs):
        first = f", first incident {r.first_incident['kind']} at step {r.first_incident['step']}" \
            if r.first_incident else ""
        ref = " (reference)" if i == comparison.reference else ""
        lines.append(f"  {i + 1}. {r.status}{first}{ref}  {Path(r.path)}")
    shown = [d for d in comparison.config_diff if d.risk != "none"][:MAX_ROWS]
    lines.append("")
    lines.append("Configuration differences, most likely to matter first:" if shown
                 else "No configuration difference that can matter.")
    for d in shown:
        values = " | ".join(setting_text(v, i in d.not_recorded) for i, v in enumerate(d.values))
        lines.append(f"  [{d.risk}] {d.key}: {values}")
        lines.append(f"      {d.why}")
    rest = len(comparison.config_diff) - len(shown)
    if rest:
        lines.append(f"  ... and {rest} more (paths, names, logging and other low-risk keys; see --json)")
    lines.append("")
    if comparison.parted:
        lines.append("Where the runs part:")
        for p in comparison.parted:
            how = ("goes non-finite" if p.nonfinite
                   else f"{cell_text(p.value)} outside {cell_text(p.band[0])}..{cell_text(p.band[1])}")
            lines.append(f"  {p.metric}: run {p.run + 1} at step {p.step} ({how}; run {p.reference + 1}: "
                         f"{cell_text(p.reference_value)})")
    else:
        lines.append("No shared metric leaves the reference run's band.")
    return "\n".join(lines)
