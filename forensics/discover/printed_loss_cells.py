"""A notebook cell whose training loop prints its loss as a bare number, one a pass: run.py's sniffing (log_hints) and
ingest/notebook both ask.

    for k in range(100):
        ...
        loss = -probs[torch.arange(num), ys].log().mean()
        print(loss.item())
        W.grad = None
        loss.backward()
        W.data += -5 * W.grad

prints `3.7794573307037354` ... `2.4737300872802734`, a column of numbers with no name (0000mprakash_Bigram_for_names:
Karpathy's makemore bigram on a names list). A bare number is anyone's print; the column is the loss only where the
cell's own code says so: its one print is of a loss variable (`loss`, `train_loss`, or its `.item()`), inside a loop
that also calls `backward()` or an optimizer's `step()`, and the cell shows nothing but its printed lines, each one
number, `FEWEST_PRINTS` or more. `loss_column(cell)` gives those numbers in print order (the loop's passes: steps
0, 1, ...), else None.
"""
from __future__ import annotations

import ast
import re
import textwrap
import warnings

FEWEST_PRINTS = 5  # a loop's column; fewer numbers could be any few values printed
_NUMBER_LINE = re.compile(r"^[ \t]*[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)[ \t]*$", re.IGNORECASE)
_LOSS_NAME = re.compile(r"loss", re.IGNORECASE)
_UPDATES = ("backward", "step")  # what a loop calls where it trains: loss.backward(), optimizer.step()
_NOT_PYTHON = re.compile(r"^\s*[!%]")  # a shell or magic line, no Python to parse
_MAX_SOURCE_CHARS = 20_000  # a training loop's cell; a longer one is a whole script pasted in, not this shape


def loss_column(cell: dict) -> list[float] | None:
    """The losses a cell's loop printed bare, in print order, where its code and outputs are that shape (module
    docstring); else None."""
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return None
    printed = _printed_numbers(cell.get("outputs"))
    if printed is None or len(printed) < FEWEST_PRINTS:
        return None
    return printed if _prints_loss_in_a_training_loop(_source(cell)) else None


def _printed_numbers(outputs) -> list[float] | None:
    """The numbers a cell's outputs show where they are stdout streams of number lines only; else None."""
    if not isinstance(outputs, list) or not outputs:
        return None
    if not all(isinstance(o, dict) and o.get("output_type") == "stream" and o.get("name", "stdout") == "stdout"
               for o in outputs):
        return None
    text = "".join(_text(o.get("text")) for o in outputs)
    lines = [line for line in text.splitlines() if line.strip()]
    if not all(_NUMBER_LINE.match(line) for line in lines):
        return None
    return [float(line) for line in lines]


def _text(value) -> str:
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _source(cell: dict) -> str:
    source = _text(cell.get("source", cell.get("input")))
    return "" if len(source) > _MAX_SOURCE_CHARS else source


def _prints_loss_in_a_training_loop(source: str) -> bool:
    """Whether the cell's one print call prints a loss variable inside a loop that calls backward() or step()."""
    if "print" not in source or not _LOSS_NAME.search(source):
        return False
    tree = parsed(source)
    prints = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and called(node.func) == "print"]
    if len(prints) != 1 or not _of_a_loss(prints[0]):
        return False
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While))]
    return any(_holds(loop, prints[0]) and updates(loop) for loop in loops)


def parsed(source: str) -> ast.Module:
    code = textwrap.dedent("\n".join("" if _NOT_PYTHON.match(line) else line for line in source.splitlines()))
    with warnings.catch_warnings():  # someone else's code: its invalid escapes are not ours to warn of
        warnings.simplefilter("ignore")
        try:
            return ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            return ast.Module(body=[], type_ignores=[])


def called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _of_a_loss(call: ast.Call) -> bool:
    """`print(loss)`, `print(train_loss.item())`: one argument, a name with `loss` in it or its item()."""
    if len(call.args) != 1 or call.keywords:
        return False
    arg = call.args[0]
    if isinstance(arg, ast.Call) and called(arg.func) == "item" and not arg.args:
        arg = arg.func.value
    return isinstance(arg, ast.Name) and _LOSS_NAME.search(arg.id) is not None


def _holds(loop: ast.AST, node: ast.AST) -> bool:
    return any(child is node for child in ast.walk(loop))


def updates(loop: ast.AST) -> bool:
    return any(isinstance(node, ast.Call) and called(node.func) in _UPDATES and not node.args
               for node in ast.walk(loop))
