"""Calls named for loading that load no weights of the model a notebook trains: a tokenizer's own `Load` (or a
tokenizer class's `from_pretrained`), a model loaded only to show what it generates before the notebook builds and
trains another, a pickled dict of data, a file the notebook itself saved earlier.

`loads_set_aside(trees, is_load)` gives the ids of such calls among those `is_load` takes for weight loads."""
from __future__ import annotations

import ast
import re
from typing import Callable

from .cells import _source, parse_quietly, python_of
from .syntax import called_name, owner_name

# What builds a tokenizer: SentencePiece's processor (`s = spm.SentencePieceProcessor(); s.Load("bpe.model")`,
# Asocsar_GPT2, whose GPT-2 is a Keras model of its own trained from random weights), any `...Tokenizer(...)`
_TOKENIZER_CLASSES = re.compile(r"SentencePieceProcessor$|Tokenizer(?:Fast)?$")
# What a model is asked for that leaves it as it was: its text, its predictions, a look at it
_LOOKS = ("generate", "predict", "summary")


def loads_set_aside(trees: list, is_load: Callable[[ast.Call], bool]) -> set[int]:
    """The ids of the load calls (`is_load`) that load no weights trained on: a tokenizer's load, the loads bound
    to a name only ever asked to generate or shown (`_looked_at_only`), and a reload of what the notebook saved
    before (`_reloads_own_save`)."""
    tokenizers = _bound_to(trees, lambda call: bool(_TOKENIZER_CLASSES.search(called_name(call.func))))
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call) and is_load(node)]
    aside = {id(call) for call in calls
             if isinstance(call.func, ast.Attribute) and _a_tokenizers(call.func, tokenizers)}
    readers = _own_file_readers(trees, is_load)
    aside |= {id(call) for call in calls if isinstance(call.func, ast.Name) and call.func.id in readers}
    aside |= {id(call) for call in _spacy_pipelines(trees, calls)}
    return aside | {id(call) for call in _looked_at_only(trees, is_load)} | _reloads_own_save(trees, calls)


# What reads a spaCy pipeline's word vectors (`token.vector`, `nlp.vocab.vectors`): the one part of it a network
# could start from
_SPACY_VECTORS = ("vector", "vectors")


def _spacy_pipelines(trees: list, calls: list[ast.Call]) -> list[ast.Call]:
    """The `spacy.load("en_core_web_sm")` calls where the code reads no word vector: a spaCy pipeline (its tokenizer,
    tagger, parser) whose weights run spaCy's own components, never the network the notebook trains
    (2b3o4o_transformer-implementation tokenizes with it, then trains its own TransformerNetwork from random
    weights)."""
    if any(isinstance(node, ast.Attribute) and node.attr in _SPACY_VECTORS
           for tree in trees for node in ast.walk(tree)):
        return []
    return [call for call in calls if called_name(call.func) == "load" and owner_name(call.func) == "spacy"]


def _own_file_readers(trees: list, is_load: Callable[[ast.Call], bool]) -> set[str]:
    """The functions the notebook defines that `open` a file and call no load of their own: a text reader named for
    loading (UWPRG_UW-Molecular-Data-Mining's `load_doc(filename)`: open, read, close, return the text)."""
    return {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any(isinstance(n, ast.Call) and called_name(n.func) == "open" for n in ast.walk(node))
            and not any(isinstance(n, ast.Call) and is_load(n) for n in ast.walk(node))}


def _a_tokenizers(func: ast.Attribute, tokenizers: set[str]) -> bool:
    """`s.Load(...)` of a tokenizer bound to `s`, or a tokenizer class's own `GPT2Tokenizer.from_pretrained("gpt2")`:
    a vocabulary, not weights (Roy19921010_WASP_DeepLearning_M3, a MiniGPT built in the cell over GPT-2's ids)."""
    owner = owner_name(func)
    return owner in tokenizers or bool(_TOKENIZER_CLASSES.search(owner))


# What writes a file a later cell may read back: Keras' `model.save('model.h5')`, `torch.save(...)`, pickle's `dump`
_SAVES = re.compile(r"^(?:save\w*|dump)$")


def _reloads_own_save(trees: list, loads: list[ast.Call]) -> set[int]:
    """The ids of the loads that read a file (named by a literal) that a call earlier in the notebook saved: the model
    this very training wrote, reloaded to generate, and pickle's `load(open('mapping.pkl', 'rb'))` of the mapping it
    dumped (UWPRG_UW-Molecular-Data-Mining: `model.save('model.h5')` after the fit, `load_model('model.h5')` below)."""
    saved: dict[str, tuple] = {}
    for index, tree in enumerate(trees):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _SAVES.match(called_name(node.func)):
                for path in _paths_named(node):
                    saved[path] = min(saved.get(path, (index, node.lineno)), (index, node.lineno))
    where = {id(node): (index, node.lineno) for index, tree in enumerate(trees) for node in ast.walk(tree)
             if isinstance(node, ast.Call)}
    return {id(call) for call in loads if any(path in saved and saved[path] < where[id(call)]
                                              for path in _paths_named(call))}


def saves_alone(cell: dict) -> dict | None:
    """A code cell left without a count whose every statement saves to a named file (`model.save('seq2seq_model.h5')`,
    `dump(mapping, open('mapping.pkl', 'wb'))`), counted; None for any other. Kept in place for `_reloads_own_save`
    where the cells that did not run are left out: such a cell shows nothing when it runs, and the file it names,
    reloaded by a cell below that ran, is the notebook's own (GoLok56_lyric_generation: the fit interrupted by hand,
    the save cell after it kept no count, `load_model('seq2seq_model.h5')` counted below it, the .h5 file committed
    beside the notebook). A cell that does more (a load, a print) is left out whole, as before."""
    try:
        tree = parse_quietly(python_of(_source(cell)))
    except (SyntaxError, ValueError, RecursionError):
        return None
    saves = all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and _SAVES.match(called_name(node.value.func)) and _paths_named(node.value)
                and all(call is node.value or called_name(call.func) == "open"
                        for call in ast.walk(node.value) if isinstance(call, ast.Call)) for node in tree.body)
    return dict(cell, execution_count=1) if saves and tree.body else None


def _paths_named(call: ast.Call) -> set[str]:
    """The string literals among a call's arguments (and their calls', `open('mapping.pkl', 'wb')`) that look like a
    file name: a dot in them, no space."""
    return {node.value for arg in [*call.args, *(k.value for k in call.keywords)] for node in ast.walk(arg)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value
            and " " not in node.value}


def _bound_to(trees: list, made_by: Callable[[ast.Call], bool]) -> set[str]:
    """The names a plain assignment binds to a call `made_by` takes (`s = spm.SentencePieceProcessor()`)."""
    return {target.id for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call) and made_by(node.value)
            for target in node.targets if isinstance(target, ast.Name)}


def _looked_at_only(trees: list, is_load: Callable[[ast.Call], bool]) -> list[ast.Call]:
    """The load calls bound to a name (`gpt2_lm = GPT2CausalLM.from_preset(...)`) that the code only asks to generate,
    predict or show itself, reads values from by their keys (`_a_look`), or hands to another such load (the preprocessor
    given to it): a preset shown generating before the notebook builds its own model from random weights (BMunitiz_NLP,
    a KerasHub GPT trained from scratch after a GPT-2 demo). A name used any other way (trained, called as a layer,
    handed to a model or a trainer) is the trained model's or a part of it."""
    bound = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and is_load(node.value) \
                    and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound.setdefault(node.targets[0].id, []).append(node.value)
    parents = {id(child): parent
               for tree in trees for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
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
