"""Reading a whole text file that is one Python literal: `pprint(trainer.state.log_history)` saved as a .txt
(NguyenTuoc2807_Financial-Numerical-Reasoning's experiments/log.txt, each dict spread over five lines in single
quotes), which JSON cannot read.

The text is parsed and built with `ast.literal_eval` (literals only, nothing is run), with the names `nan` and `inf`
that Python's repr writes for a non-finite float taken as those floats: a NaN loss is what a broken run's history
holds. Files over `MAX_LITERAL_BYTES` are not parsed (a syntax tree costs many times the text's size).
"""
from __future__ import annotations

import ast
import os
import re
from typing import Any

from ..decoding import decode_text
from ..errors import UnreadableFile

MAX_LITERAL_BYTES = 16 << 20
MAX_CUT_TRIES = 8  # the list's own commas before the cut tried as its last entry's end, the last first
# What moves a literal's nesting depth (a bracket) or ends a list's entry (a comma), with the strings that may hold
# either skipped whole: one pass finds the list's own commas, so a cut is parsed at an entry's end, not at every comma
_STRUCTURE = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|[\[\](){},]")
_NON_FINITE = {"nan": float("nan"), "inf": float("inf")}
_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)


class _NonFiniteNames(ast.NodeTransformer):
    """`nan` / `inf` (repr of a non-finite float) as float constants; any other name is left for literal_eval to
    refuse."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _NON_FINITE:
            return ast.copy_location(ast.Constant(_NON_FINITE[node.id]), node)
        return node


def read_python_literal(path) -> Any:
    """The one Python literal the file holds (a list of dicts, ...); UnreadableFile where it is too big or is not
    one literal."""
    if os.path.getsize(path) > MAX_LITERAL_BYTES:
        raise UnreadableFile(path, f"a Python literal over {MAX_LITERAL_BYTES >> 20} MB: not parsed")
    with open(path, "rb") as fh:
        text, _ = decode_text(fh.read())
    try:
        tree = _NonFiniteNames().visit(ast.parse(text.strip(), mode="eval"))
        return ast.literal_eval(tree)
    except _PARSE_ERRORS:
        raise UnreadableFile(path, "not one Python literal (a printed list of log dicts) as a whole") from None


def complete_literal_values(text: str) -> list:
    """The entries of a Python-literal list (`text` starts with its `[`) cut before its closing bracket, up to the last
    one a comma ends (what comes after it may be cut mid-entry, mid-number); [] where no prefix so ended is a list.

    >>> complete_literal_values("[{'loss': 2.1, 'step': 10},\\n {'loss': 1.9, 'step': 20},\\n {'loss': 1.8")
    [{'loss': 2.1, 'step': 10}, {'loss': 1.9, 'step': 20}]
    """
    if len(text) > MAX_LITERAL_BYTES:
        return []
    for end in _list_commas(text)[::-1][:MAX_CUT_TRIES]:
        try:
            value = ast.literal_eval(_NonFiniteNames().visit(ast.parse(text[:end] + "]", mode="eval")))
        except _PARSE_ERRORS:
            continue
        return value if isinstance(value, list) else []
    return []


def _list_commas(text: str) -> list[int]:
    """Where the commas of the list `text` opens stand (its own, not those inside an entry or a string)."""
    depth, commas = 0, []
    for token in _STRUCTURE.finditer(text):
        char = token.group()
        if char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
        elif char == "," and depth == 1:
            commas.append(token.start())
    return commas
