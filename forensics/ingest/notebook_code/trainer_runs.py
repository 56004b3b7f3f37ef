"""Which of a notebook's trainers it trained with: those whose `.train()` the cells call (`trainer.train()`, or
`Trainer(...).train()`), not one built only to evaluate (`evaluator.evaluate(...)` after a QLoRA training)."""
from __future__ import annotations

import ast

from .arguments import bound_names, builds_a_trainer
from .precision import trains_in_its_own_code

Where = tuple[int, int]  # (cell, line) of a call


def code_trains(trees: list) -> bool:
    """The code trains: a loop's backward pass or Keras' fit (`precision.trains_in_its_own_code`), or a `.train()`
    that reaches a trainer the code builds (`trained_trainers`: `trainer.train()`, `SFTTrainer(...).train()`). A
    script that only reads a run's log to plot it, or builds a Trainer to `.evaluate()`, does none of these."""
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return trains_in_its_own_code(calls) or bool(trained_trainers(*_trainers_and_train_calls(trees)))


def _trainers_and_train_calls(trees: list) -> tuple[list, list]:
    """(place, bound name) of each trainer built, directly or through a function of the code that returns one
    (gianfrancobarba_PST-Parser's `trainer = build_trainer(...)`), and (place, target) of each `.train()` call."""
    factories = _trainer_factories(trees)
    built, train_calls = [], []
    for cell, tree in enumerate(trees):
        bound = bound_names(tree)
        for node in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
            where = (cell, node.lineno)
            if builds_a_trainer(node) or isinstance(node.func, ast.Name) and node.func.id in factories:
                built.append((where, bound.get(id(node))))
            if calls_train(node):
                train_calls.append((where, train_target(node, cell)))
    return built, train_calls


def _trainer_factories(trees: list) -> set[str]:
    """The names of the code's functions that return a trainer they build (`return SFTTrainer(...)`)."""
    return {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any(isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call) and builds_a_trainer(ret.value)
                    for ret in ast.walk(node))}


def calls_train(node: ast.Call) -> bool:
    """`x.train()`, `x.train("ckpt")` or `x.train(resume_from_checkpoint=...)`: a trainer's (or a model's) training
    call. A module's `model.train(False)` (eval mode) is caught too, but only a trainer's name or a built trainer is
    matched as the target (`trained_trainers`)."""
    return isinstance(node.func, ast.Attribute) and node.func.attr == "train"


def train_target(node: ast.Call, cell: int) -> str | Where | None:
    """What `.train()` is called on: a name, or the trainer built in the same expression (its place)."""
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    if isinstance(receiver, ast.Name):
        return receiver.id
    return (cell, getattr(receiver, "lineno", 0)) if isinstance(receiver, ast.Call) else None


def trained_trainers(built: list[tuple[Where, str | None]], train_calls: list[tuple[Where, object]]) -> set[Where]:
    """The places of the trainers a `.train()` call reaches: for a name, the last trainer bound to it before the call
    (a name rebound to an evaluate-only trainer later is not trained by an earlier call)."""
    places = {where for where, _ in built}
    out = set()
    for at, target in train_calls:
        if isinstance(target, tuple):
            out.update({target} & places)
            continue
        before = [where for where, name in built if name == target and where <= at]
        if before:
            out.add(max(before))
    return out
