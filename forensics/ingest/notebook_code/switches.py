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
# The builtins that bind a name given as a string or a mapping (`eval` may run any of them)
_BINDS_BY_NAME = frozenset({"globals", "locals", "vars", "exec", "eval", "setattr"})


def without_dead_branches(tree: ast.AST, switches: dict, ready_at: dict | None = None) -> ast.AST:
    """The tree with each branch the switches (`literal_switches`) or a constant test turn off left out; a switch the
    tree itself binds (`ready_at`: {name: its last binding's line}) decides only the tests on the lines after."""
    return _DeadBranches(switches, ready_at or {}).visit(tree)


def switches_of_each_cell(trees: list, counts: list, unread: frozenset = frozenset()) -> list[tuple[dict, dict]]:
    """(switches, ready_at) for each cell's tree (`without_dead_branches`): the literal switches whose every binding
    cell ran before it - by execution count, by file order where either lacks one; a test in a cell run before the
    binding (`if use_4bit:` counted 3, `use_4bit = False` counted 7) saw another value or none - or bound in the cell
    itself, at its top, on a line before the test. `counts`: each tree's execution count or None."""
    switches = literal_switches(trees, unread)
    lines = [_binding_lines(tree, switches) for tree in trees]
    out = []
    for i, own in enumerate(lines):
        before = {name: value for name, value in switches.items()
                  if all(_ran_before(j, i, counts) for j, other in enumerate(lines) if j != i and name in other)
                  and own.get(name, 0) is not None}
        out.append((before, {name: line for name, line in own.items() if name in before}))
    return out


def _ran_before(j: int, i: int, counts: list) -> bool:
    known = isinstance(counts[i], int) and isinstance(counts[j], int)
    return counts[j] < counts[i] if known else j < i


def _binding_lines(tree: ast.AST, switches: dict) -> dict:
    """{switch: the last line the tree binds it on}, None where a function or class body binds it (run when called)."""
    out: dict = {}
    for node in ast.walk(tree):
        for name in _assigned_names(node) if isinstance(node, (ast.Assign, ast.AnnAssign)) else ():
            if name in switches and out.get(name, 0) is not None:
                out[name] = max(out.get(name, 0), node.lineno)
    for scope in ast.walk(tree):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            out.update({node.id: None for node in ast.walk(scope)
                        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in switches})
    return out


def literal_switches(trees: list, unread: frozenset = frozenset()) -> dict:
    """{name: value} of the names that the cells' every binding binds to one and the same literal (`use_4_bit =
    False` in one cell, nothing else binding `use_4_bit`); none where a cell may bind a name it does not spell
    (`binds_unseen_names`); `unread`: names a cell that ran but did not parse binds, so not known."""
    literal: dict[str, set] = {}
    counted: dict[str, int] = {}
    other: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if binds_unseen_names(node):
                return {}
            value = _literal_assigned(node)
            for name in _assigned_names(node) if value is not None else ():
                literal.setdefault(name, set()).add((type(value), value))
                counted[name] = counted.get(name, 0) + 1
            other |= _names_bound(node)
    stored = _stores_by_name(trees)
    return {name: next(iter(values))[1] for name, values in literal.items()
            if len(values) == 1 and name not in other | unread and stored.get(name) == counted[name]}


def binds_unseen_names(node: ast.AST) -> bool:
    """`from m import *`, or a call that may bind any name without spelling it as a target: `globals()['x'] = ...`,
    `globals().update(cfg)`, `exec('x = True')`, `setattr(sys.modules[__name__], 'x', ...)`, writes to `vars()` /
    `locals()` (which name it binds is not read). Not `setattr(model.config, ...)` or `vars(args)`, which bind an
    object's attribute, never a notebook's global (a QLoRA notebook's `setattr(model, 'model_parallel', True)`)."""
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == "*" for alias in node.names)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BINDS_BY_NAME):
        return False
    if node.func.id == "setattr":
        return bool(node.args) and _is_a_module(node.args[0])
    return node.func.id != "vars" or not node.args


def _is_a_module(node: ast.AST) -> bool:
    """`sys.modules[__name__]` (or any `sys.modules[...]`): the notebook's own module, whose attributes are globals."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "modules"


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

    def __init__(self, switches: dict, ready_at: dict):
        self.switches, self.ready_at = switches, ready_at

    def visit_If(self, node: ast.If | ast.IfExp):
        self.generic_visit(node)
        taken = self._decided(node.test)
        return node if taken is None else node.body if taken else node.orelse

    visit_IfExp = visit_If  # (an expression's arms: its body and orelse are one expression each)

    def _decided(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.Constant):
            return bool(test.value)
        line = getattr(test, "lineno", 0)
        switches = {name: value for name, value in self.switches.items() if self.ready_at.get(name, 0) < line}
        return machine_test(test, _NO_MACHINE, switches, switches_only=True) if switches else None
