"""The branches of a notebook's code that never ran, left out of its trees: under `if False:` (Unsloth's templates keep
their reload-for-inference code so, naming no model the run trained), and under an `if` (or in the arm of an `x if
test else y`) whose test the literal switches decide: names that every binding in the cells that ran binds to one
literal (dominodatalab_aihub_llama3_1_sft: `use_4_bit = False`, so the 4-bit BitsAndBytesConfig under `if use_4_bit:`
was never built, and the 8-bit one under `if use_8_bit:` was). The test is read by `arguments.machine_test` with no
machine known: a name, `not name`, `name == literal`, `name is True`, joined with and / or. A test it cannot decide
(a call, an input, a name bound from anything else, to two literals, or by an import, a loop or a parameter) keeps
both branches read."""
from __future__ import annotations

import ast

from .arguments import machine_test
from .machine import PrintedMachine

_NO_MACHINE = PrintedMachine()  # (a test of the machine is no literal switch: the outputs may be of another machine)
_SCALARS = (bool, int, float, str)


def without_dead_branches(tree: ast.AST, switches: dict) -> ast.AST:
    """The tree with each branch the switches (`literal_switches`) or a constant test turn off left out."""
    return _DeadBranches(switches).visit(tree)


def literal_switches(trees: list) -> dict:
    """{name: value} of the names that the cells' every binding binds to one and the same literal (`use_4_bit =
    False` in one cell, nothing else binding `use_4_bit`); none where a cell imports `*`, which may bind any name."""
    literal: dict[str, set] = {}
    counted: dict[str, int] = {}
    other: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                return {}
            value = _literal_assigned(node)
            for name in _assigned_names(node) if value is not None else ():
                literal.setdefault(name, set()).add((type(value), value))
                counted[name] = counted.get(name, 0) + 1
            other |= _names_bound(node)
    stored = _stores_by_name(trees)
    return {name: next(iter(values))[1] for name, values in literal.items()
            if len(values) == 1 and name not in other and stored.get(name) == counted[name]}


def _literal_assigned(node: ast.AST):
    """The scalar literal an assignment binds (`x = False`, `x: int = 8`), else None."""
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, _SCALARS) else None


def _assigned_names(node: ast.AST) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _stores_by_name(trees: list) -> dict[str, int]:
    """How many times each name is stored to anywhere (an assignment, an augmented one, a loop, a `with ... as`)."""
    out: dict[str, int] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                out[node.id] = out.get(node.id, 0) + 1
    return out


def _names_bound(node: ast.AST) -> set[str]:
    """The names a node binds other than through a stored `ast.Name`: a parameter, a function or class, an import,
    an exception caught, a pattern matched."""
    if isinstance(node, ast.arg):
        return {node.arg}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    name = getattr(node, "name", None) if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) else None
    return {name} if isinstance(name, str) else set()


class _DeadBranches(ast.NodeTransformer):
    """Each `if` / `x if test else y` with a decided test replaced by the branch that ran."""

    def __init__(self, switches: dict):
        self.switches = switches

    def visit_If(self, node: ast.If | ast.IfExp):
        self.generic_visit(node)
        taken = self._decided(node.test)
        return node if taken is None else node.body if taken else node.orelse

    visit_IfExp = visit_If  # (an expression's arms: its body and orelse are one expression each)

    def _decided(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.Constant):
            return bool(test.value)
        return machine_test(test, _NO_MACHINE, self.switches) if self.switches else None
