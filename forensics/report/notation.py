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
# Words that leave a row's last phrase hanging ("and 0.1302 at…", "fell back to…"); "step" only after one of them
# ("at step…": the number dropped), as "at 1 isolated step" ends a phrase of its own.
_HANGING = frozenset(("at", "to", "from", "of", "and", "than", "not", "by", "in", "on", "for", "with"))


def clause_end(text: str) -> str:
    """`text` cut at its last clause boundary (before ", ", "; ", ": ", " (", " - ", after ")") that leaves its
    parentheses, brackets and quotes closed: within its second half, or anywhere where `text` itself leaves one open
    (a parenthesis broken off reads worse than a shorter sentence); where there is none, the last one that keeps a
    third of it; else `text` less its trailing comma, colon, opening parenthesis and hanging words
    (`without_hanging_words`). One left open in its first third is let be: a cut before it would keep next to nothing
    ("acc(top1 ..."). A `text` that ends on a clause's own comma, semicolon or colon (a row cut between words) already
    ends a clause.

    >>> clause_end("skipped updates from step 40 (only fp16 has one; bf16")
    'skipped updates from step 40'
    >>> clause_end("spikes 8 times from step 83 to 200, the largest to 63.76 at step")
    'spikes 8 times from step 83 to 200'
    >>> clause_end("method: LoRA (unsloth banner in")
    'method: LoRA'
    >>> clause_end("loss 2.254 at step 10 and")
    'loss 2.254 at step 10'
    >>> clause_end("jumps to 3.025 at step 201 (from about 0.0093) as the learning-rate")
    'jumps to 3.025 at step 201 (from about 0.0093)'
    >>> clause_end("spikes to 35.59 at step 190000, 14x its recent median 2.504;")
    'spikes to 35.59 at step 190000, 14x its recent median 2.504'
    """
    ignored = {i for i in _left_open(text) if i < len(text) // 3}
    if text[-1:] in (",", ";", ":") and _closed(text[:-1], ignored):
        return text[:-1]
    breaks = _clause_breaks(text, ignored)
    open_ = not _closed(text, ignored)
    late = (breaks if open_ else [b for b in breaks if b >= len(text) // 2]
            or [b for b in breaks if b >= len(text) // 3])
    # a clause may end on a hanging word too ("Log the loss (logging_steps) and, where ...")
    return without_hanging_words(text[:late[-1]]) if late else without_hanging_words(text, breaks)


def _clause_breaks(text: str, ignored: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """Where `text` may be cut at a clause boundary that leaves its parentheses, brackets and quotes closed (those
    opened at `ignored` aside)."""
    return [m.start() for m in _CLAUSE_ENDS.finditer(text) if m.start() > 0 and _closed(text[:m.start()], ignored)]


def _closed(text: str, ignored: frozenset[int] | set[int] = frozenset()) -> bool:
    return set(_left_open(text)) <= set(ignored)


def _left_open(text: str) -> list[int]:
    """Where `text` opens a parenthesis, a square bracket or a double quote it does not close (a row broken off in
    `lr=[0.0001, 0.0002` or `"adamw_torch, fused` reads as badly as one in a parenthesis)."""
    opened: list[int] = []
    for i, char in enumerate(text):
        if char in "([" or char == '"' and not (opened and text[opened[-1]] == '"'):
            opened.append(i)
        elif opened and text[opened[-1]] + char in ("()", "[]", '""'):
            opened.pop()
    return opened


def without_hanging_words(text: str, breaks: list[int] | None = None) -> str:
    """`text` less its trailing comma, colon, opening parenthesis and the words that leave a phrase hanging. A "not"
    is neither kept last nor dropped (either turns the sentence around): the text is cut before the clause that holds
    it, at the last of `breaks` (`_clause_breaks`) before it, or to "" where there is none.

    >>> without_hanging_words("0.1279 at its first logged point and 0.1302 at")
    '0.1279 at its first logged point and 0.1302'
    """
    breaks = _clause_breaks(text) if breaks is None else breaks
    words = text.rstrip(" ,;:(-").split(" ")
    while len(words) > 1 and _hangs(words):
        if words[-1].lower() == "not":
            before = [b for b in breaks if b < len(" ".join(words[:-1]))]
            return text[:before[-1]] if before else ""
        words.pop()
    return " ".join(words).rstrip(" ,;:(-")


def _hangs(words: list[str]) -> bool:
    last = words[-1].lower()
    return last in _HANGING or last == "step" and len(words) > 1 and words[-2].lower() in _HANGING
