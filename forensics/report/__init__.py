"""The report: the story of a run (plain data), its text and its self-contained HTML page.

    from forensics.report import build_story, story_text, write_html
    print(story_text(build_story(analysis)))
    write_html(analysis, "report.html")

The plots and the HTML page need matplotlib and jinja2; they are imported on first use
(module `__getattr__`), so the text report and the CLI start without them.
"""
from importlib import import_module

from .notation import block_ranges, elide
from .story import Answer, Story, build_story
from .text import analysis_text, story_text

# name -> submodule, imported when the name is first asked for (matplotlib, jinja2).
_LAZY = {
    "damage_map_figure": "damage", "figure_data_uri": "plots", "main_figure": "plots",
    "render_html": "html", "write_html": "html", "summary_html": "html", "render_bisect_html": "html",
    "write_bisect_html": "html",
}

__all__ = [
    "build_story", "Story", "Answer", "story_text", "analysis_text", "main_figure", "damage_map_figure",
    "figure_data_uri", "render_html", "write_html", "summary_html", "render_bisect_html", "write_bisect_html",
    "block_ranges", "elide",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
