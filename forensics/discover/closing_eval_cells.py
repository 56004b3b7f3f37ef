"""A notebook whose training function prints only its held-out loss when it returns: run.py's sniffing (log_hints) and
ingest/notebook both ask.

    def train(model, optimizer, scheduler=None, config=MASTER_CONFIG):
        losses = []
        for epoch in range(config['epochs']):
            ...
            loss.backward()
            optimizer.step()
            if epoch % config['log_interval'] == 0:
                losses += [evaluate_loss(model)]
                if scheduler:
                    print("lr: ", scheduler.get_lr())
        print("validation loss: ", losses[-1]['val'])

    train(model, optimizer)

prints `validation loss:  3.9495063066482543` once a call (and, with a scheduler, `lr:  [0.0009999457184159408]` every
log interval before it): the "Llama from scratch" blog's loop (Vishal-Padia_llama-from-scratch,
dangnguyenngochai_Llama_from_scratch: a dozen calls, the curves drawn only as images). No console reader can take such a
line for a training's: a bare `validation loss: X` is anyone's print. It is one where the notebook's code says so: a
function whose loop calls backward() or an optimizer's step() and that prints a held-out loss by that label after the
loop, and a cell that calls it. `closing_evals(cell, trainers)` gives that cell's points: the learning rate of each
`lr: [x]` print at steps 0, 1, ... (the n-th print, the n-th logged iteration), then the held-out loss at the last of
them (the evaluation the print reports is the loop's last), at 0 where no rate is printed.
"""
from __future__ import annotations

import ast
import re

from .printed_loss_cells import called, parsed, _source, _text, updates

# the label a held-out loss is printed under (`print("validation loss: ", x)`), and the line it prints
_LABEL = re.compile(r"^\s*(?:validation|valid|val)[ _]loss\s*(?::\s*)?$", re.IGNORECASE)
_FLOAT = r"([-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))"
_EVAL_LINE = re.compile(r"^\s*(?:validation|valid|val)[ _]loss\s*:?\s+" + _FLOAT + r"\s*$", re.IGNORECASE)
# a scheduler's get_lr() / get_last_lr() printed as is: a list of one group's rate, or the bare rate
_LR_LINE = re.compile(r"^\s*lr\s*:?\s+\[?\s*" + _FLOAT + r"\s*\]?\s*$", re.IGNORECASE)


def trainers(cells: list) -> set[str]:
    """The names of the functions the notebook's code cells define that train and close with a held-out loss print
    (module docstring)."""
    names = set()
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        if "def " not in source or "print" not in source:
            continue
        names |= {node.name for node in ast.walk(parsed(source))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _closes_with_a_held_out_loss(node)}
    return names


def closing_evals(cell: dict, trained_by: set[str]) -> list[tuple[int, str, float]] | None:
    """The (step, metric, value) points of a cell that calls one of `trained_by` and shows its closing print (module
    docstring); else None."""
    if not trained_by or not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return None
    text = "".join(_text(o.get("text")) for o in _outputs(cell) if o.get("output_type") == "stream")
    if "loss" not in text or not _calls(_source(cell), trained_by):
        return None
    points, rates = [], 0
    for line in text.splitlines():
        rate, held_out = _LR_LINE.match(line), _EVAL_LINE.match(line)
        if rate:
            points.append((rates, "learning_rate", float(rate.group(1))))
            rates += 1
        elif held_out:
            points.append((max(rates - 1, 0), "eval_loss", float(held_out.group(1))))
    return points if any(metric == "eval_loss" for _, metric, _ in points) else None


def _closes_with_a_held_out_loss(function: ast.AST) -> bool:
    """Whether a function's body holds a loop that calls backward() or step(), and, outside any loop, a print of a
    held-out loss by its label."""
    loops = [node for node in ast.walk(function) if isinstance(node, (ast.For, ast.While))]
    if not any(updates(loop) for loop in loops):
        return False
    in_loops = {id(node) for loop in loops for node in ast.walk(loop)}
    return any(isinstance(node, ast.Call) and called(node.func) == "print" and id(node) not in in_loops
               and _labelled_held_out(node) for node in ast.walk(function))


def _labelled_held_out(call: ast.Call) -> bool:
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and bool(_LABEL.match(first.value))


def _calls(source: str, names: set[str]) -> bool:
    return any(name in source for name in names) and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
        for node in ast.walk(parsed(source)))


def _outputs(cell: dict) -> list[dict]:
    outputs = cell.get("outputs")
    return [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []
