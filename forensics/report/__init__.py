"""The report: the story of a run (plain data), its text and its self-contained HTML page.

    from forensics.report import build_story, story_text, write_html
    print(story_text(build_story(analysis)))
    write_html(analysis, "report.html")
"""
from .._lazy import lazy_exports

# Imported on first use: the text report needs the story, not matplotlib (plots, damage, html).
_EXPORTS = {
    "damage_map_figure": ".damage", "figure_data_uri": ".plots", "main_figure": ".plots",
    "render_bisect_html": ".html", "render_html": ".html", "summary_html": ".html", "write_bisect_html": ".html",
    "write_html": ".html", "Answer": ".story", "Story": ".story", "build_story": ".story",
    "block_ranges": ".notation", "elide": ".notation", "story_text": ".text", "analysis_text": ".text",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "build_story", "Story", "Answer", "story_text", "analysis_text", "main_figure", "damage_map_figure",
    "figure_data_uri", "render_html", "write_html", "summary_html", "render_bisect_html", "write_bisect_html",
    "block_ranges", "elide",
]
