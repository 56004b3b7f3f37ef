"""What the notebook-code readers ask of Python's syntax tree: the name a call calls and what owns it, a dotted name,
a literal's value, the name an expression starts from."""
from __future__ import annotations

import ast


def root_name(func: ast.expr) -> str:
    """`prepare_model` of `prepare_model(...)`, `utils` of `utils.prepare(...)`."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else ""


def called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def owner_name(func: ast.expr) -> str:
    """`FastLanguageModel` of `FastLanguageModel.from_pretrained(...)`; '' for a bare call."""
    return called_name(func.value) if isinstance(func, ast.Attribute) else ""


def dotted(node: ast.expr) -> str | None:
    """`bf16` of a name, `CONFIG.bf16` of a class's (or an object's) field read through its name; else None."""
    if isinstance(node, ast.Name):
        return node.id
    return f"{node.value.id}.{node.attr}" if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        else None


def literal_value(node: ast.expr, names: dict):
    """The bool, number or string `node` is written as, or that its name (in `names`) was bound to; else None."""
    if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node) in names:
        return names[dotted(node)]
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return value if isinstance(value, (bool, int, float, str)) else None


def unwrapped_calls(expr: ast.expr, methods, functions, bare_methods: bool = False) -> ast.expr:
    """`x` of calls that hand back what they are given: `x.<method>(...)` for a name in `methods` (only without
    positional arguments where `bare_methods`), `<function>(x)` for a name in `functions`, however deeply nested."""
    while isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in methods and not (bare_methods and expr.args):
            expr = expr.func.value
        elif called_name(expr.func) in functions and len(expr.args) == 1:
            expr = expr.args[0]
        else:
            break
    return expr
