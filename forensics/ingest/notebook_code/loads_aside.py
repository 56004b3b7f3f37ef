"""Calls named for loading that load no weights of the model a notebook trains: a tokenizer's own `Load`, a model
loaded only to show what it generates before the notebook builds and trains another, a pickled dict of data.

`loads_set_aside(trees, is_load)` gives the ids of such calls among those `is_load` takes for weight loads."""
from __future__ import annotations

import ast
import re
from typing import Callable

from .syntax import _called_name, _owner_name

# What builds a tokenizer: SentencePiece's processor (`s = spm.SentencePieceProcessor(); s.Load("bpe.model")`,
# Asocsar_GPT2, whose GPT-2 is a Keras model of its own trained from random weights), any `...Tokenizer(...)`
_TOKENIZER_CLASSES = re.compile(r"SentencePieceProcessor$|Tokenizer(?:Fast)?$")
# What a model is asked for that leaves it as it was: its text, its predictions, a look at it
_LOOKS = ("generate", "predict", "summary")


def loads_set_aside(trees: list, is_load: Callable[[ast.Call], bool]) -> set[int]:
    """The ids of the load calls (`is_load`) that load no weights trained on: a tokenizer's load, and the loads bound
    to a name only ever asked to generate or shown (`_looked_at_only`)."""
    tokenizers = _bound_to(trees, lambda call: bool(_TOKENIZER_CLASSES.search(_called_name(call.func))))
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call) and is_load(node)]
    aside = {id(call) for call in calls if isinstance(call.func, ast.Attribute) and _owner_name(call.func) in tokenizers}
    return aside | {id(call) for call in _looked_at_only(trees, is_load)}


def _bound_to(trees: list, made_by: Callable[[ast.Call], bool]) -> set[str]:
    """The names a plain assignment binds to a call `made_by` takes (`s = spm.SentencePieceProcessor()`)."""
    return {target.id for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and made_by(node.value)
            for target in node.targets if isinstance(target, ast.Name)}


def _looked_at_only(trees: list, is_load: Callable[[ast.Call], bool]) -> list[ast.Call]:
    """The load calls bound to a name (`gpt2_lm = GPT2CausalLM.from_preset(...)`) that the code only asks to generate,
    predict or show itself, reads values from by their keys (`_a_look`), or hands to another such load (the preprocessor given to it): a preset shown generating
    before the notebook builds its own model from random weights (BMunitiz_NLP, a KerasHub GPT trained from scratch
    after a GPT-2 demo). A name used any other way (trained, called as a layer, handed to a model or a trainer) is the
    trained model's or a part of it."""
    bound = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and is_load(node.value) \
                    and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound.setdefault(node.targets[0].id, []).append(node.value)
    parents = {id(child): parent for tree in trees for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    uses = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load) and node.id in bound]
    aside = {use.id for use in uses}  # a load never used again says nothing of what it was for: it stays a load
    changed = True
    while changed:  # a name handed to a load that is itself no longer set aside is used by the trained model
        changed = False
        for use in uses:
            if use.id in aside and not _a_look(use, parents, aside, bound):
                aside.discard(use.id)
                changed = True
    return [call for name in aside for call in bound[name]]


def _a_look(use: ast.Name, parents: dict, aside: set[str], bound: dict) -> bool:
    """Whether a name's use leaves its model as it was: `name.generate(...)` and the like, a value read from it by a
    key, or an argument of a load bound to a name still set aside."""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Attribute) and parent.attr in _LOOKS:
        return True
    if isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant) \
            and isinstance(parent.slice.value, str):
        return True  # a dict read by its keys: data (the tokenizer's `stoi` and `merges` a pickle.load gave,
        # evintunador_micro-GPT-sandbox); weights read out of it reach a model through a load of their own
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    return isinstance(parent, ast.Call) and any(parent in bound[name] for name in aside)
