"""A PyTorch Lightning training in a notebook's code: the framework, and the precision its Trainer was given.

The code imports Lightning (`import pytorch_lightning as pl`, `import lightning as L`, `from pytorch_lightning
import Trainer`) and builds its Trainer (`pl.Trainer(**train_params)`): framework lightning. The Trainer's
`precision` keyword, given to it or to the dict splatted into it, says the precision where the code shows its value:
32 / "32-true" fp32, 16 / "16-mixed" fp16, "bf16" / "bf16-mixed" bf16; a choice between two
(`precision=16 if args.fp_16 else 32`, Suraj Patil's T5 notebook: joaorafaelm_notebooks) where the flag tested is a
literal the code passes as a keyword or binds (`args_dict = dict(..., fp_16=False, ...)`, then
`args = argparse.Namespace(**args_dict)`), its last value in the cells' order.
"""
from __future__ import annotations

import ast

from .syntax import called_name, dotted, literal_value, root_name

_PACKAGES = ("pytorch_lightning", "lightning")
_PRECISIONS = {"32": "fp32", "32-true": "fp32", "16": "fp16", "16-mixed": "fp16", "bf16": "bf16",
               "bf16-mixed": "bf16", "bf16-true": "bf16", "16-true": "fp16"}


def lightning_values(trees: list, names: dict) -> dict:
    """`_framework` lightning where the code builds a Lightning Trainer, with `precision.lightning` ("fp32", "fp16"
    or "bf16") where its precision is shown (module docstring); {} where the code builds none."""
    aliases = _lightning_names(trees)
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    trainers = [c for c in calls if called_name(c.func) == "Trainer" and _from_lightning(c.func, aliases)]
    if not trainers:
        return {}
    flags = {**names, **_keyword_literals(calls)}
    splatted = _splatted_dicts(trees, {dotted(k.value) for c in trainers for k in c.keywords if k.arg is None})
    chosen = [_precision(k.value, flags) for c in trainers + splatted for k in c.keywords if k.arg == "precision"]
    found = {"_framework": "lightning"}
    if chosen and chosen[-1] is not None:
        found["precision.lightning"] = chosen[-1]
    return found


def _lightning_names(trees: list) -> set[str]:
    """The names the code imports Lightning (or its Trainer) under: `pl`, `L`, `Trainer`."""
    out = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out |= {a.asname or a.name for a in node.names if a.name.split(".")[0] in _PACKAGES}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _PACKAGES:
                out |= {a.asname or a.name for a in node.names if a.name == "Trainer"}
    return out


def _from_lightning(func: ast.expr, aliases: set[str]) -> bool:
    return (root_name(func) if isinstance(func, ast.Attribute) else called_name(func)) in aliases


def _keyword_literals(calls: list) -> dict:
    """Every keyword the calls pass a literal (`dict(fp_16=False)`), the last in order standing, by its name alone:
    `args.fp_16` is read through `fp_16`."""
    return {k.arg: value for c in calls for k in c.keywords if k.arg
            for value in [literal_value(k.value, {})] if value is not None}


def _splatted_dicts(trees: list, splatted: set) -> list:
    """The `dict(...)` calls bound to a name the Trainer is handed as `**name`."""
    return [node.value for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and called_name(node.value.func) == "dict"
            and any(dotted(t) in splatted for t in node.targets)]


def _precision(value: ast.expr, flags: dict) -> str | None:
    """The precision a `precision=` value names, a choice between two resolved through its flag; else None."""
    if isinstance(value, ast.IfExp):
        test = dotted(value.test) if isinstance(value.test, (ast.Name, ast.Attribute)) else None
        flag = flags.get(test, flags.get(test.split(".")[-1])) if test else None
        if not isinstance(flag, bool):
            return None
        return _precision(value.body if flag else value.orelse, flags)
    literal = literal_value(value, {})
    return _PRECISIONS.get(str(literal)) if isinstance(literal, (int, str)) and not isinstance(literal, bool) else None
