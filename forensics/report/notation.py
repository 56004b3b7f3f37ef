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


_CLAUSE_ENDS = re.compile(r"[,;:] | \(| - |(?<=\)) ")  # a cut before each; after a closing parenthesis


def clause_end(text: str) -> str:
    """`text` cut at its last clause boundary (before ", ", "; ", ": ", " (", " - ", after ")") that leaves its
    parentheses closed: within its second half, or anywhere where `text` itself leaves one open (a parenthesis broken
    off reads worse than a shorter sentence); where there is none, `text` itself less a trailing comma, colon or
    opening parenthesis. A `text` that ends on a clause's own comma, semicolon or colon (a row cut between words)
    already ends a clause.

    >>> clause_end("skipped updates from step 40 (only fp16 has one; bf16")
    'skipped updates from step 40'
    >>> clause_end("spikes 8 times from step 83 to 200, the largest to 63.76 at step")
    'spikes 8 times from step 83 to 200'
    >>> clause_end("method: LoRA (unsloth banner in")
    'method: LoRA'
    >>> clause_end("loss 2.254 at step 10 and")
    'loss 2.254 at step 10 and'
    >>> clause_end("jumps to 3.025 at step 201 (from about 0.0093) as the learning-rate")
    'jumps to 3.025 at step 201 (from about 0.0093)'
    >>> clause_end("spikes to 35.59 at step 190000, 14x its recent median 2.504;")
    'spikes to 35.59 at step 190000, 14x its recent median 2.504'
    """
    if text[-1:] in (",", ";", ":") and text.count("(") == text.count(")"):
        return text[:-1]
    open_ = text.count("(") > text.count(")")
    cuts = [m.start() for m in _CLAUSE_ENDS.finditer(text)
            if (open_ and m.start() > 0 or m.start() >= len(text) // 2)
            and text[:m.start()].count("(") == text[:m.start()].count(")")]
    return text[:cuts[-1]] if cuts else text.rstrip(" ,;:(-")
