"""Which of a notebook's trainers it trained with: those whose `.train()` the cells call (`trainer.train()`, or
`Trainer(...).train()`), not one built only to evaluate (`evaluator.evaluate(...)` after a QLoRA training)."""
from __future__ import annotations

import ast

from .precision import trains_in_its_own_code

Where = tuple[int, int]  # (cell, line) of a call


def code_trains(trees: list) -> bool:
    """The code trains: a loop's backward pass or Keras' fit (`precision.trains_in_its_own_code`), or any `.train()`
    call but `model.train(False)` (`trainer.train()`, `SFTTrainer(...).train()`, a trainer a factory of another
    module built, one passed in as an argument). A script that only reads a run's log to plot it, or builds a Trainer
    to `.evaluate()`, does none of these."""
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return trains_in_its_own_code(calls) or any(calls_train(c) and not _eval_mode(c) for c in calls)


def _eval_mode(call) -> bool:
    """`model.train(False)`: PyTorch's switch to evaluation mode, no training."""
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False


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
