"""How the report writes names compactly: block ranges (`model.layers.21-23`) and elided names.

Used by the story, the tables, the plots and the damage map alike.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..checkpoints.blocks import block_ranges  # noqa: F401  (re-exported: one notation everywhere)
from ..findings import plural  # noqa: F401  (re-exported: the report's notation)


def elide(name: str, limit: int = 28) -> str:
    """`name` cut to `limit` characters with an ellipsis in the middle (the tail holds the step or index).

    >>> elide("checkpoint-with-a-very-long-name-12000", 20)
    'checkpoi…-name-12000'
    """
    name = str(name)
    if len(name) <= limit:
        return name
    tail = (limit - 1) * 3 // 5
    return name[:limit - 1 - tail] + "…" + name[-tail:]



def shown_path(path, root) -> str:
    """A file's path as the report shows it: relative to the run's folder where it lies inside it, else whole.

    >>> shown_path("/runs/a/checkpoint-10/trainer_state.json", Path("/runs/a")), shown_path("/elsewhere/x.log", None)
    ('checkpoint-10/trainer_state.json', '/elsewhere/x.log')
    """
    try:
        shown = str(Path(path).relative_to(root))
    except (ValueError, TypeError):
        shown = str(path)
    return printable(shown)


# What drives a terminal instead of printing: the C0 and C1 controls and DEL (ESC [ ... moves the cursor, clears the
# screen, retitles the window) and the bidirectional marks, embeddings, overrides and isolates (they reorder what is
# shown, so a name reads as another).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text, keep_lines: bool = False) -> str:
    r"""`text` with every control character written as its Python escape (ESC as `\x1b`), so that a file name holding
    terminal escape codes prints as what it is and cannot drive the terminal, as the HTML report escapes it for the
    page. `keep_lines`: the line breaks of a report's own lines stay (a name is escaped whole, its newline too).

    >>> print(printable("ck\x1b[2J/trainer_state.json"))
    ck\x1b[2J/trainer_state.json
    """
    text = str(text)

    def escaped(match: re.Match) -> str:
        char = match.group()
        return char if keep_lines and char == "\n" else char.encode("unicode_escape").decode("ascii")

    return _CONTROLS.sub(escaped, text)
