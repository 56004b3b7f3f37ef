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
from typing import Any

from ..decoding import decode_text
from ..errors import UnreadableFile

MAX_LITERAL_BYTES = 16 << 20
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
