"""A console's text as its processes printed it: what terminals, launchers and log collectors put around each line,
gone.

`as_printed(text)`: ANSI colour codes and NULs out, torchrun's / srun's `[rank0]: ` prefixes, `docker logs -t` time
stamps, `srun --label` task numbers and Ray's actor prefixes off each line's start, CRLF made LF, and the HF
Trainer's HTML tables made text (`results_table.html_tables_as_text`). `line_at(text, at)`: the line holding a position.
"""
from __future__ import annotations

import re

from .pretrain_lines import ANSI
from .results_table import html_tables_as_text


def as_printed(text: str) -> str:
    """The console's text with what wrapped its lines taken off (module docstring)."""
    text = ANSI.sub("", _CURSOR_UP.sub("\n", text)) if "\x1b" in text else text
    text = text.replace("\x00", "") if "\x00" in text else text  # a file overwritten while its writer appended
    text = _LAUNCHER_PREFIX.sub("", text) if "]:" in text else text
    text = _without_line_stamps(text.replace("\r\n", "\n") if "\r\n" in text else text)
    return html_tables_as_text(text)


# tqdm's nested bars (an `Iteration` bar under an `Epoch` bar) end each redraw with cursor-up (ESC [ A), and what the
# script prints next starts on a line of its own on the screen; in the captured file it follows on the bar's line,
# where the bar's numbers (`19%|...| 283/1529`) would read as the step of the script's `Step: 280 | Loss: ...`
_CURSOR_UP = re.compile(r"\x1b\[\d*A")


# What torchrun (`[rank0]: `, `[default0]: `) and srun before it (`0: [default0]: `) put before each line of a process:
# gone, so that a line reads as that process printed it (block and table shapes are anchored at the line's start);
# the copies every rank prints of one step are dropped later (`settled_lines.without_rank_copies`).
_LAUNCHER_PREFIX = re.compile(r"^(?:\d+: )?\[(?:rank|default)\d+\]: ?", re.MULTILINE)


# What a log collector puts before every line: `docker logs -t` / `kubectl logs --timestamps` an RFC 3339 time
# (`2024-05-01T12:00:00.123456789Z `), `srun --label` the task's number (`0: `; taken off only where nearly every line
# has one, since a script may print `0: ...` itself)
_RFC3339_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) ", re.MULTILINE)
_TASK_LABEL = re.compile(r"^\d{1,4}: ", re.MULTILINE)
# Ray's prefix on what an actor or task prints (`(pretraining, pid=4112) `, `(MyActor pid=4112, ip=10.0.0.1) `), inside
# srun's label when both are there; taken off, like the task's label, only where nearly every line has one
_RAY_ACTOR = re.compile(r"^\((?:[\w.:-]+,? )?pid=\d{1,9}(?:, ip=[\d.]+)?\) ", re.MULTILINE)


def _without_line_stamps(text: str) -> str:
    if _RFC3339_STAMP.match(text):
        text = _RFC3339_STAMP.sub("", text)
    for label in (_TASK_LABEL, _RAY_ACTOR):
        text = _without_collector_label(text, label)
    return text


def _without_collector_label(text: str, label: re.Pattern) -> str:
    """The text without `label` at its lines' starts, where a few distinct labels stand on nearly every line (a
    loop's own `100: loss 2.3` lines count up instead)."""
    if not label.match(text):
        return text
    head = [line for line in text[:200_000].split("\n")[:500] if line.strip()]
    labels = [m.group(0) for line in head if (m := label.match(line))]
    if head and len(labels) >= 0.9 * len(head) and len(set(labels)) <= _MAX_TASK_LABELS:
        text = label.sub("", text)
    return text


_MAX_TASK_LABELS = 16


def line_at(text: str, at: int) -> str:
    """The line (between newlines or carriage returns) that holds position `at`."""
    start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
    ends = [k for k in (text.find("\n", at), text.find("\r", at)) if k >= 0]
    return text[start:min(ends, default=len(text))]


def bracket_depths(text: str):
    """(position, character, depth after it) of each character of `text` outside quoted strings ('...' or "...", a
    backslash escaping the quote), depth counting the brackets ( [ { open around it: the shape of a printed Python
    literal, read without evaluating it."""
    depth, quote, escaped = 0, "", False
    for i, ch in enumerate(text):
        if quote:
            escaped, quote = (not escaped and ch == "\\"), ("" if ch == quote and not escaped else quote)
            continue
        if ch in "'\"":
            quote = ch
            continue
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        yield i, ch, depth


_EXCERPT = 160  # characters of a quoted line kept in the evidence


def line_end(line: str) -> str:
    """A line as quoted in the evidence: whole where short, else its last `_EXCERPT` characters from a word's start,
    marked as cut ("..."), so no quote begins inside a word."""
    line = line.strip()
    if len(line) <= _EXCERPT:
        return line
    tail = line[-_EXCERPT:]
    space = tail.find(" ")
    return "..." + (tail[space + 1:] if 0 <= space < _EXCERPT // 4 else tail)
