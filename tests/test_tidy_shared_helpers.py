"""Shared helpers stay shared (session 32's tidy): one number check for the readers, and no module reaching into
another's private names where the owner can make them public. Read from the source with `ast`, nothing imported."""
from __future__ import annotations

import ast
import math
from pathlib import Path

import forensics
from forensics.ingest._config_keys import is_number

PACKAGE = Path(forensics.__file__).resolve().parent


def _modules():
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def test_only_config_keys_defines_the_readers_number_check():
    defined = [str(path.relative_to(PACKAGE)) for path, tree in _modules() for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name in ("is_number", "_is_number")]
    assert defined == ["ingest/_config_keys.py"]


def test_the_number_check_takes_ints_and_floats_with_nan_and_no_bool_or_text():
    # what every reader that used a copy of its own meant: a JSON number, NaN and Inf kept (they are data), a
    # JSON true/false or a quoted number none
    assert [is_number(v) for v in (1, 2.5, math.nan, math.inf, True, False, "1", None, [1])] == \
        [True, True, True, True, False, False, False, False, False]


def test_no_module_imports_a_private_name_of_hand_written():
    private = [(str(path.relative_to(PACKAGE)), alias.name) for path, tree in _modules() for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("hand_written")
               for alias in node.names if alias.name.startswith("_")]
    assert private == []
