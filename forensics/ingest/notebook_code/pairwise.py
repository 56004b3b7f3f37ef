"""A hand-written loop's pairwise preference loss: the notebook's own code computes -log sigmoid(beta x margin) of a
chosen answer's log-probability against a rejected one's, so the loss its cells print is that, not a language
model's cross-entropy.

sarahxgh_RL-for-Finetunning-LLms-dpo's DPO.ipynb defines `dpo_loss(chosen_logp, rejected_logp, beta=0.1)` as
`-torch.log(torch.sigmoid(beta * (chosen_logp - rejected_logp))).mean()` on summed sequence log-probs and prints its
value each step (27.44 at step 0, no reference model): a name alone is not read where a loss starts so far above
ln 2 (`profile.objective`), but the code that computes it is what was trained. Told here: a function defined in a cell
that ran, called there too, taking a chosen and a rejected argument (by their names), whose body takes a sigmoid
(`sigmoid`, `logsigmoid`) of them.
"""
from __future__ import annotations

import ast

from .syntax import called_name

_SIGMOIDS = ("sigmoid", "logsigmoid", "log_sigmoid")


def pairwise_loss_function(trees: list) -> str | None:
    """The name of the pairwise logistic loss the cells that ran (`trees`) define and call (module docstring), or
    None."""
    nodes = [n for tree in trees for n in ast.walk(tree)]
    called = {called_name(n.func) for n in nodes if isinstance(n, ast.Call)}
    return next((n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name in called and _takes_a_pair(n) and _takes_a_sigmoid(n)), None)


def _takes_a_pair(function: ast.FunctionDef) -> bool:
    """Whether the function's arguments name a chosen and a rejected side (`chosen_logp`, `policy_rejected_logps`)."""
    names = [a.arg.lower() for a in function.args.args + function.args.kwonlyargs]
    return any("chosen" in n for n in names) and any("rejected" in n for n in names)


def _takes_a_sigmoid(function: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Call) and called_name(n.func) in _SIGMOIDS for n in ast.walk(function))
