"""A README's prose read strictly: its text without HTML comments (the model card template PEFT and the Hub write lists
every regime in one), and whether the sentence a phrase stands in tells what ran or only offers, compares, negates or
advises ("You can train from scratch with --init scratch", "far cheaper than training from scratch", "Use `--bf16`
to enable BF16 mixed precision", "We recommend bf16 mixed precision"). Shared by `readme_scratch` and
`readme_precision`: a README is the weakest evidence a run has, so a hedged sentence says nothing.
"""
from __future__ import annotations

import re

_COMMENT = re.compile(r"<!--.*?-->", re.S)
# a sentence ends at . ! ? before white space, or at a line's end (a heading, a list item, a code comment)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
# before the phrase (or in it): a negation, a comparison, an option, advice or a condition
_HEDGE_BEFORE = re.compile(
    r"(?i)\b(?:not|no|never|without|instead|rather|unlike|than|vs|versus|compared?|comparing|can|could|may|might|"
    r"options?|optional(?:ly)?|enabl\w*|supports?|supported|recommend\w*|if|whether)\b|^\W*use\b|--[a-z]")
# after it: the other side of a comparison, or the command-line flag that turns it on
_HEDGE_AFTER = re.compile(
    r"(?i)\b(?:vs|versus|compared|optional(?:ly)?|recommended|supported|possible|can|could|may)\b|"
    r"^[^.]*?\b(?:use|pass|set|add)\b[^.]*?--[a-z]")


def without_comments(text: str) -> str:
    """The README's text with its HTML comments left out."""
    return _COMMENT.sub("", text)


# the most of a sentence looked at on either side of a phrase: a README's sentence is far shorter, and a search to the
# text's start for every phrase is quadratic (a 200 KB README of hedged task words took 38 s)
_SENTENCE_MAX = 2000


def sentence_around(text: str, start: int, end: int) -> tuple[str, str]:
    """(the sentence's words before the span start..end, its words after the span), each at most `_SENTENCE_MAX`
    characters."""
    window = max(0, start - _SENTENCE_MAX)
    begin = max((m.end() for m in _SENTENCE_END.finditer(text, window, start)), default=window)
    stop = _SENTENCE_END.search(text, end, end + _SENTENCE_MAX)
    return text[begin:start], text[end:stop.start() if stop else min(len(text), end + _SENTENCE_MAX)]


def hedged(text: str, start: int, end: int) -> bool:
    """Whether the sentence holding text[start:end] negates, compares, offers or advises it rather than tells it."""
    before, after = sentence_around(text, start, end)
    said = (before + text[start:end]).lstrip()  # "Use ..." opening the sentence is advice; "we use ..." is not
    return _HEDGE_BEFORE.search(said) is not None or _HEDGE_AFTER.search(after) is not None
