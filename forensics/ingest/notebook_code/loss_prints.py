"""A hand-written loop's `print(loss)` in a notebook cell: the bare scalar tensors the cell's outputs show are that
loss, though no label on their lines says so.

A loop that prints its loss tensor as is shows only its repr, `tf.Tensor(8.88289, shape=(), dtype=float32)` or
PyTorch's `tensor(2.31, device='cuda:0')` (AaronBarbosa12_transformer_model: a tf.GradientTape loop whose `print(loss)`
after each epoch's batches is its only print of a number). The console reader cannot tell such a line from an
accuracy printed the same way; the cell's code can. Where every print of one bare name in the cell prints a loss
(`print(loss)`, `print(train_loss)`), the cell's bare scalar tensor lines are given the label `loss: ` the console
reader knows (`console_lines.hand_written.PRINTED_TENSOR`). A cell that also prints another bare name
(`print(acc)`) is left as it is: which line is which is not known.
"""
from __future__ import annotations

import ast
import re

from ..console_lines.hand_written import PRINTED_TENSOR
from .cells import _source, parse_quietly, python_of
from .syntax import called_name

# a loss's name: `loss`, `train_loss`, `loss_value`, `epoch_loss` (not `loss_fn`, the criterion)
_LOSS_NAME = re.compile(r"(?:\w+_)?loss(?:_(?:value|val|item))?", re.IGNORECASE)
_NEEDLES = ("tensor(", "tf.Tensor(")


def loss_prints_labelled(cell: dict, outputs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The cell's outputs (text, kind), the bare scalar tensor lines of its streams labelled `loss: ` where its code
    prints a loss by its bare name and no other bare name (module docstring); else the outputs as they are."""
    if not any(kind == "stream" and any(n in text for n in _NEEDLES) for text, kind in outputs):
        return outputs
    if not prints_its_loss_bare(_source(cell)):
        return outputs
    return [(_labelled(text) if kind == "stream" else text, kind) for text, kind in outputs]


def prints_its_loss_bare(source: str) -> bool:
    """Whether a cell's code prints a loss by its bare name (`print(loss)`) and prints no other bare name."""
    try:
        tree = parse_quietly(python_of(source))
    except (SyntaxError, ValueError, RecursionError):
        return False
    printed = [node.args[0].id for node in ast.walk(tree) if isinstance(node, ast.Call)
               and called_name(node.func) == "print" and len(node.args) == 1 and not node.keywords
               and isinstance(node.args[0], ast.Name)]
    return bool(printed) and all(_LOSS_NAME.fullmatch(name) for name in printed)


def _labelled(text: str) -> str:
    lines = text.split("\n")
    return "\n".join("loss: " + line.lstrip() if (m := PRINTED_TENSOR.match(line)) and not m.group(1) else line
                     for line in lines)
