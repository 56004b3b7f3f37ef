"""gpt-2-simple's fine-tune in a notebook's code: `import gpt_2_simple as gpt2`, then `gpt2.finetune(sess, dataset=...,
model_name='345M', steps=1000)` (ra4wv2_CompQA). Its TensorFlow graph trains every weight of the GPT-2 it restores
unless `only_train_transformer_layers=True` (then the embeddings stay), and has no mixed-precision option: float32."""
from __future__ import annotations

import ast

from .syntax import called_name

_MODULE = "gpt_2_simple"


def gpt2_simple_finetunes_whole(trees: list) -> bool:
    """Whether the code that ran calls gpt-2-simple's `finetune` (through the module's name or what was imported
    from it) and no call of it sets `only_train_transformer_layers` to anything but a literal False."""
    modules = {alias.asname or alias.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name == _MODULE}
    imported = {alias.asname or alias.name for tree in trees for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == _MODULE for alias in node.names}
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)
             and called_name(node.func) == "finetune" and _from_the_module(node.func, modules, imported)]
    return bool(calls) and not any(
        k.arg in ("only_train_transformer_layers", None) and not (isinstance(k.value, ast.Constant) and k.value.value
                                                                  is False)
        for call in calls for k in call.keywords)


def _from_the_module(func: ast.expr, modules: set[str], imported: set[str]) -> bool:
    if isinstance(func, ast.Attribute):
        return isinstance(func.value, ast.Name) and func.value.id in modules
    return isinstance(func, ast.Name) and func.id in imported
