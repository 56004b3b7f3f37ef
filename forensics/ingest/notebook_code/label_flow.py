"""Where a notebook's labels come from, followed through its own code: which expressions hold a padded tokenization
(`tokenizer(texts, padding="max_length")`), which hold its padded `input_ids`, and which statements copy those ids
into the labels (`tok["labels"] = tok["input_ids"].copy()`, `{"labels": enc["input_ids"][i]}`).

Followed only where the code says it plainly: a name bound by an assignment (the last one before the use; inside a
function, the function's own if it binds the name, else the notebook's), a copy or conversion of a value
(`.copy()`, `.clone()`, `torch.tensor(...)`, `list(...)`), a row of it (`ids[idx]`), the items of an encoding
re-keyed (`{k: v[idx] for k, v in enc.items()}`), and a Dataset class's attribute set in `__init__` from a
parameter every construction of the class passes a padded encoding (`self.labels['input_ids'][idx]`: the HF
docs' custom-Dataset recipe). Anything else (a function's parameter, a tuple unpacked) is unknown: no fact.

`padding=True` / `"longest"` pads to the longest sequence of what one call is given: a list at the notebook's top
level, or a batch of a function `.map(f, batched=True)` calls; one example (a `.map` without `batched`) gets no
padding at all, so only there, and for `"max_length"` (or `pad_to_max_length=True`) always, is a call padded.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .syntax import called_name, unwrapped_calls

# calls whose value holds the same ids as what they are given: a copy, a conversion, a move to a device
_SAME_IDS_METHODS = frozenset({"copy", "clone", "to", "detach", "tolist", "long", "squeeze", "flatten", "numpy",
                               "cpu", "cuda", "contiguous"})
_SAME_IDS_FUNCTIONS = frozenset({"list", "deepcopy", "tensor", "LongTensor", "array", "asarray", "as_tensor",
                                 "Tensor"})
_MAX_DEPTH = 12  # a chain of names followed further than this is left unknown (and no cycle runs forever)


@dataclass(frozen=True)
class Where:
    """A statement's place: the cell's label ("In [6]"), its line in the cell's code, and the statement's text."""
    cell: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.cell} line {self.line}: `{self.text}`"


@dataclass
class _Scope:
    """What the walk needs to know of where an expression sits: the function it is in (None at the notebook's top
    level), the class whose method it is in, and the place, ordered (cell, line, column)."""
    function: ast.AST | None
    cls: str | None
    order: tuple
    enclosing: tuple = ()  # the functions and classes it is written in, outermost first


@dataclass
class LabelFlow:
    """The notebook's assignments, Dataset classes and label copies, gathered for `padded_labels`."""
    binds: dict = field(default_factory=dict)  # (function id or None, name) -> [(order, value, scope)]
    params: dict = field(default_factory=dict)  # function id -> its parameter names
    init_attrs: dict = field(default_factory=dict)  # class -> {attribute: the __init__ parameter's position}
    constructions: dict = field(default_factory=dict)  # class -> [(call, scope)]
    batched_maps: set = field(default_factory=set)  # names of functions a `.map(f, batched=True)` calls
    sinks: list = field(default_factory=list)  # (the value copied into labels, its scope, Where)
    places: dict = field(default_factory=dict)  # id(call) -> Where of each call that pads
    defined: dict = field(default_factory=dict)  # name -> the function or class nodes defining it, in order
    loads: dict = field(default_factory=dict)  # name -> [ids of the definitions each read of it is written in]


def gathered(cells_and_trees: list[tuple[str, str, ast.AST]]) -> LabelFlow:
    """The flow of the cells (label, code, tree), in the order they ran."""
    flow = LabelFlow()
    for index, (label, code, tree) in enumerate(cells_and_trees):
        _walk(flow, tree, _Scope(None, None, (index, 0, 0)), (label, code.splitlines()))
    return flow


def _walk(flow: LabelFlow, node: ast.AST, scope: _Scope, cell: tuple) -> None:
    for child in ast.iter_child_nodes(node):
        here = _Scope(scope.function, scope.cls, (scope.order[0], getattr(child, "lineno", scope.order[1]),
                                                  getattr(child, "col_offset", scope.order[2])), scope.enclosing)
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            flow.defined.setdefault(child.name, []).append(child)
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            flow.params[id(child)] = [a.arg for a in child.args.posonlyargs + child.args.args]
            if scope.cls and child.name == "__init__":
                flow.init_attrs[scope.cls] = _attributes_from_parameters(child)
            _walk(flow, child, _Scope(child, scope.cls, here.order, scope.enclosing + (child,)), cell)
            continue
        if isinstance(child, ast.ClassDef):
            _walk(flow, child, _Scope(scope.function, child.name, here.order, scope.enclosing + (child,)), cell)
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            flow.loads.setdefault(child.id, []).append({id(d) for d in scope.enclosing})
        _note(flow, child, here, cell)
        _walk(flow, child, here, cell)


def _note(flow: LabelFlow, node: ast.AST, scope: _Scope, cell: tuple) -> None:
    """Record what one node says: a binding, a label copy, a class built, a batched map, a padding call's place."""
    key = id(scope.function) if scope.function is not None else None
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for name in _names_bound(target):
                value = node.value if isinstance(target, ast.Name) else None  # a tuple unpacked: unknown
                flow.binds.setdefault((key, name), []).append((scope.order, value, scope))
            if isinstance(target, ast.Subscript) and _string_key(target.slice) == "labels":
                flow.sinks.append((node.value, scope, _where(node, cell)))
    elif isinstance(node, (ast.For, ast.With, ast.comprehension)):
        for target in _loop_targets(node):
            for name in _names_bound(target):
                flow.binds.setdefault((key, name), []).append((scope.order, None, scope))
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if k is not None and _string_key(k) == "labels":
                flow.sinks.append((v, scope, _where(node, cell)))
    if isinstance(node, ast.Call):
        _note_call(flow, node, scope, cell)


def _note_call(flow: LabelFlow, call: ast.Call, scope: _Scope, cell: tuple) -> None:
    name = called_name(call.func)
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    if name == "dict" and "labels" in keywords:
        flow.sinks.append((keywords["labels"], scope, _where(call, cell)))
    if name == "map" and call.args and isinstance(call.args[0], ast.Name) and _is_true(keywords.get("batched")):
        flow.batched_maps.add(call.args[0].id)
    if isinstance(call.func, ast.Name):
        flow.constructions.setdefault(call.func.id, []).append((call, scope))
    padding = next((k for k in call.keywords if k.arg in ("padding", "pad_to_max_length")), None)
    if padding is not None:  # (its own line: a call spread over lines says how it pads on one of them)
        flow.places[id(call)] = _where(padding, cell)


def _where(node: ast.AST, cell: tuple) -> Where:
    label, lines = cell
    line = getattr(node, "lineno", 1)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Where(label, line, text[:120])


def _attributes_from_parameters(init: ast.FunctionDef) -> dict[str, int]:
    """`{"labels": 1}` of `def __init__(self, encodings, labels): self.labels = labels` (positions after `self`)."""
    params = [a.arg for a in init.args.args][1:]
    found = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params:
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    found[target.attr] = params.index(node.value.id)
    return found


def _names_bound(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _names_bound(element)]
    return []


def _loop_targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.With):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return [node.target]


def _string_key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def in_live_code(flow: LabelFlow, scope: _Scope) -> bool:
    """Whether code at `scope` can be what fed the training: at the notebook's top level, or in functions and classes
    each the last definition of its name and read somewhere outside itself. A padded `tokenize` redefined without
    padding, or left for a `tokenize_new`, no longer makes the data (a cell re-run after the change remaps it)."""
    outer = (None,) + scope.enclosing[:-1]
    return all(isinstance(parent, ast.ClassDef) or  # a method: its class is what is defined and read
               flow.defined.get(d.name, [None])[-1] is d
               and any(id(d) not in inside for inside in flow.loads.get(d.name, []))
               for parent, d in zip(outer, scope.enclosing))


def padded_kind(flow: LabelFlow, expr: ast.AST, scope: _Scope, depth: int = 0) -> tuple[str, Where] | None:
    """("encoding", where) where `expr` holds a padded tokenization, ("ids", where) where it holds its input_ids
    (where: the call that padded); None where the code does not say so plainly (module docstring)."""
    if depth > _MAX_DEPTH:
        return None
    expr = _same_ids(expr)
    if isinstance(expr, ast.Call):
        return ("encoding", flow.places[id(expr)]) if _pads(flow, expr, scope) else None
    if isinstance(expr, (ast.Subscript, ast.Attribute)):
        key = _string_key(expr.slice) if isinstance(expr, ast.Subscript) else expr.attr
        if key == "input_ids":
            found = padded_kind(flow, expr.value, scope, depth + 1)
            return ("ids", found[1]) if found and found[0] == "encoding" else None
        if isinstance(expr, ast.Attribute):
            return _class_attribute(flow, expr, scope, depth)
        if key is None:  # a row or a slice of the ids: still the ids
            found = padded_kind(flow, expr.value, scope, depth + 1)
            return found if found and found[0] == "ids" else None
        return None
    if isinstance(expr, ast.Name):
        return _bound(flow, expr.id, scope, depth)
    if isinstance(expr, ast.DictComp):
        return _rekeyed(flow, expr, scope, depth)
    if isinstance(expr, ast.ListComp):
        return _each_row(flow, expr, scope, depth)
    return None


def _same_ids(expr: ast.AST) -> ast.AST:
    """`ids` of `ids.copy()`, `torch.tensor(ids)`, `list(ids).to(device)`: what holds the same ids."""
    return unwrapped_calls(expr, _SAME_IDS_METHODS, _SAME_IDS_FUNCTIONS)


def _pads(flow: LabelFlow, call: ast.Call, scope: _Scope) -> bool:
    """Whether a call pads what it is given (module docstring: `max_length` always; `True` / `longest` on a list)."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    padding = keywords.get("padding")
    if _is_true(keywords.get("pad_to_max_length")) or \
            isinstance(padding, ast.Constant) and padding.value == "max_length":
        return True
    longest = isinstance(padding, ast.Constant) and (padding.value is True or padding.value == "longest")
    function = scope.function
    return longest and (function is None or getattr(function, "name", None) in flow.batched_maps)


def _bound(flow: LabelFlow, name: str, scope: _Scope, depth: int) -> tuple[str, Where] | None:
    """What the name holds: the function's own last binding before the use (a parameter it does not rebind:
    unknown), else the notebook's last one (before the use at the top level; a function runs after the cells that
    define it, so there the last of all)."""
    function = id(scope.function) if scope.function is not None else None
    own = flow.binds.get((function, name), []) if function is not None else []
    if own:
        before = [b for b in own if b[0] < scope.order]
    elif function is not None and name in flow.params.get(function, ()):
        return None
    else:
        notebook = flow.binds.get((None, name), [])
        before = [b for b in notebook if b[0] < scope.order] if function is None else notebook
    if not before:
        return None
    if function is not None and scope.function is not None and not own:
        return _every_binding(flow, before, depth)
    _, value, bound_at = before[-1]
    return padded_kind(flow, value, bound_at, depth + 1) if value is not None else None


def _every_binding(flow: LabelFlow, bindings: list, depth: int) -> tuple[str, Where] | None:
    """What a notebook's name read inside a function holds: when the function runs is not known (a Dataset's
    `__getitem__` runs in `trainer.train()`, before a later generation cell rebinds the name), so only what every
    binding of it holds."""
    kinds = [padded_kind(flow, value, at, depth + 1) if value is not None else None for _, value, at in bindings]
    return kinds[-1] if all(k is not None and k[0] == kinds[-1][0] for k in kinds) else None


def _class_attribute(flow: LabelFlow, expr: ast.Attribute, scope: _Scope, depth: int) -> tuple[str, Where] | None:
    """`self.labels` in a method of a Dataset class whose `__init__` stores a parameter there: what every
    construction of the class passes for it, where all of them pass the same kind (none: unknown)."""
    if not (isinstance(expr.value, ast.Name) and expr.value.id == "self" and scope.cls):
        return None
    position = flow.init_attrs.get(scope.cls, {}).get(expr.attr)
    built = flow.constructions.get(scope.cls, [])
    if position is None or not built:
        return None
    kinds = []
    for call, where in built:
        if len(call.args) <= position:
            return None
        kinds.append(padded_kind(flow, call.args[position], where, depth + 1))
    return kinds[0] if all(k is not None and k[0] == kinds[0][0] for k in kinds) else None


def _rekeyed(flow: LabelFlow, expr: ast.DictComp, scope: _Scope, depth: int) -> tuple[str, Where] | None:
    """`{key: val[idx] for key, val in enc.items()}`: the encoding `enc` re-keyed, row by row."""
    if len(expr.generators) != 1:
        return None
    source = expr.generators[0].iter
    if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr == "items"):
        return None
    found = padded_kind(flow, source.func.value, scope, depth + 1)
    return found if found and found[0] == "encoding" else None


def _each_row(flow: LabelFlow, expr: ast.ListComp, scope: _Scope, depth: int) -> tuple[str, Where] | None:
    """`[ids.copy() for ids in enc["input_ids"]]`: the padded ids, row by row."""
    if len(expr.generators) != 1 or expr.generators[0].ifs:
        return None
    element, target = _same_ids(expr.elt), expr.generators[0].target
    if not (isinstance(element, ast.Name) and isinstance(target, ast.Name) and element.id == target.id):
        return None
    found = padded_kind(flow, expr.generators[0].iter, scope, depth + 1)
    return found if found and found[0] == "ids" else None
