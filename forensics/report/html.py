"""Render the self-contained HTML report (and the bisect page) from the Jinja2 templates.

The page needs no script and no other host: plots are PNG data URIs, styles are inline, and a
Content-Security-Policy forbids scripts and outside requests as a second line of defence.
Everything that comes from a run's files is escaped by Jinja2's autoescape; nothing is marked safe.
"""
from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import jinja2

from .._version import __version__
from .damage import damage_map_figure
from .plots import figure_data_uri, main_figure
from .updates_plot import updates_figure
from .notation import block_ranges
from .text import profile_line
from .story import build_story
from . import tables


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("forensics.report", "templates"),
        autoescape=True,                 # every {{ value }} is HTML-escaped
        undefined=jinja2.StrictUndefined,  # a typo in the template fails loudly, not as blank text
        trim_blocks=True, lstrip_blocks=True,
    )


def _data_uri_or_none(fig) -> str | None:
    return figure_data_uri(fig) if fig is not None else None


def render_html(analysis, bisect=None) -> str:
    """The report of `analysis` as one self-contained HTML page (returns the page as a str).

    With `bisect` (a BisectResult), its last good / first bad and window are added as a section.
    """
    first_bad = analysis.first_bad_checkpoint
    context = {
        "title": f"forensics: {Path(analysis.path).name or analysis.path}",
        "story": build_story(analysis),
        "profile_line": profile_line(analysis.run_profile),
        "profile_evidence": sorted(analysis.run_profile.evidence.items()),
        "run_path": str(analysis.path),
        "main_plot": figure_data_uri(main_figure(analysis)),
        "damage_plot": _data_uri_or_none(damage_map_figure(analysis)),
        "updates_plot": _data_uri_or_none(updates_figure(analysis)),
        "precursor": next((f.message for f in analysis.findings if f.kind == "update_precursor"), None),
        "findings": tables.finding_rows(analysis.findings),
        "n_findings": len(analysis.findings),
        "checkpoints": tables.checkpoint_rows(analysis.checkpoints),
        "n_checkpoints": len(analysis.checkpoints),
        "first_bad": first_bad.name if first_bad else None,
        "worst": tables.worst_tensor_rows(first_bad),
        "causes": tables.cause_rows(analysis.causes),
        "config": tables.config_rows(analysis.config),
        "config_missing": list(analysis.config.missing),
        "skipped": tables.skipped_rows(analysis.skipped),
        "n_skipped": len(analysis.skipped),
        "files": tables.layout_rows(analysis.layout),
        "segments": [s for s in analysis.timeline.segments if s.abandoned],
        "bisect": _bisect_context(bisect) if bisect is not None else None,
        "version": __version__,
        "created": analysis.created,
    }
    return _environment().get_template("report.html").render(**context)


def summary_html(analysis) -> str:
    """A short HTML fragment (verdict, four answers, counts) for a notebook's `_repr_html_`."""
    return _environment().get_template("summary.html").render(
        story=build_story(analysis), run_path=str(analysis.path), n_findings=len(analysis.findings),
        n_checkpoints=len(analysis.checkpoints), n_skipped=len(analysis.skipped))


def write_html(analysis, path, bisect=None) -> Path:
    """Write the report of `analysis` to `path` (UTF-8) and return the path written."""
    path = Path(path)
    path.write_text(render_html(analysis, bisect=bisect), encoding="utf-8")
    return path


def render_page(template: str, title: str, **context) -> str:
    """A standalone page from one template of the report (version and time stamped like the report)."""
    return _environment().get_template(template).render(
        title=title, version=__version__, created=datetime.now(timezone.utc).isoformat(timespec="seconds"), **context)


def write_page(text: str, path) -> Path:
    """Write a rendered page to `path` (UTF-8) and return the path written."""
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path


def render_bisect_html(result) -> str:
    """The page of `forensics bisect --html`: last good / first bad, probes, damage and the window's findings."""
    return render_page("bisect.html", "forensics bisect", bisect=_bisect_context(result))


def write_bisect_html(result, path) -> Path:
    """Write the bisect page for `result` to `path` and return the path written."""
    return write_page(render_bisect_html(result), path)


def bisect_fragment_html(result) -> str:
    """A bisect result as an HTML fragment (for a notebook): the bisect page's body, autoescaped."""
    body = _environment().get_template("bisect_body.html").render(b=_bisect_context(result))
    return f'<div class="forensics-bisect">{body}</div>'


def _bisect_context(result) -> dict:
    from .bisect_plot import bisect_figure

    first_bad = result.first_bad
    header, change_rows = tables.change_rows(result.changes)
    lo, hi = result.window
    return {
        "last_good": _ref_row(result.last_good),
        "first_bad": _ref_row(first_bad.ref) if first_bad else None,
        "bad_blocks": block_ranges(first_bad.nonfinite_blocks) if first_bad and first_bad.nonfinite_blocks else "",
        "window": (tables.cell_text(lo), tables.cell_text(hi)),
        "probed": [{"name": ref.name, "step": tables.cell_text(ref.step), "verdict": verdict}
                   for ref, verdict in result.probed],
        "n_candidates": len(result.candidates),
        "unread": [{"name": ref.name, "step": tables.cell_text(ref.step), "reason": reason}
                   for ref, reason in result.unread],
        "unread_in_window": [ref.name for ref in result.unread_in_window()],
        "damaged": tables.damaged_by_block(first_bad),
        "change_header": header,
        "changes": change_rows,
        "n_changes": 0 if result.changes is None else len(result.changes),
        "window_findings": tables.finding_rows(result.findings),
        "picture": _data_uri_or_none(bisect_figure(result)),
    }


def _ref_row(ref) -> dict | None:
    if ref is None:
        return None
    return {"name": ref.name, "step": tables.cell_text(ref.step), "path": str(ref.path)}
