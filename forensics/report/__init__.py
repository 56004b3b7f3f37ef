"""The report: the story of a run (plain data), its plots, and the self-contained HTML page.

    from forensics.report import build_story, write_html
    print(build_story(analysis).to_text())
    write_html(analysis, "report.html")
"""
from .damage import damage_map_figure
from .html import render_bisect_html, render_html, summary_html, write_bisect_html, write_html
from .plots import figure_data_uri, main_figure
from .story import Answer, Story, block_ranges, build_story, natural_key

__all__ = [
    "build_story", "Story", "Answer", "main_figure", "damage_map_figure", "figure_data_uri",
    "render_html", "write_html", "summary_html", "render_bisect_html", "write_bisect_html", "block_ranges", "natural_key",
]
