"""What a notebook says of a language model's text cut into subword pieces: the tokenizer its code names, and the
text's length in characters and in tokens, both printed by its own code for one text read from a file. From these a
token's length in characters is known (analyzers.subword_floor judges the loss a character), and with the tokens a
batch takes in, the passes over the text.

`subword_corpus(cells)` gives, in the run configuration's names, where the code names a subword tokenizer and both
counts are read: `data.subword_tokenizer` (the name as the code writes it), `data.text_chars` with
`data.text_chars_line` (the output line of a `print(..., len(text))` whose `text` is bound only to a file's `.read()`),
`data.text_tokens` with `data.text_tokens_line` (the line of a `print` of `len(data)` or `data.shape`, `data` bound
only to what contains `encode(text)` of that same text), `data.tokens_a_batch` (batch_size x the window's length,
literals) and `data.batches_an_epoch` (a Keras 3 fit's bar). A print is matched to its output line by counting: the
cell's n-th top-level print is its stdout's n-th line while every print before it prints one line (strings, lengths,
shapes); a print of a tensor may take several lines, and the prints after it are not read."""
from __future__ import annotations

import ast
import re

from .cells import cells_that_ran, quiet_tree
from .char_corpus import ANSI, SUBWORD_TOKENIZER, batch_values, unparsed
from .syntax import called_name

# What encodes a text into token ids: SentencePiece's `sp.encode(text)`, tiktoken's `enc.encode_ordinary(text)`, a
# tokenizers / transformers tokenizer's `encode`, SentencePiece's older `EncodeAsIds`, the lecture's own `encode(s)`
_ENCODES = re.compile(r"encode|encode_ordinary|EncodeAsIds|encode_as_ids")
# A count as printed: 1115394, 1,115,394
_COUNT = r"(\d{1,3}(?:,\d{3})+|\d+)"
# A 1-D shape as printed: torch's `torch.Size([295231])`, numpy's `(295231,)`
_SHAPE = r"(?:torch\.Size\(\[|\()(\d+)(?:\]\)|,\))"
# Attributes printed on one line
_ONE_LINE_ATTRIBUTES = frozenset({"shape", "dtype", "device", "size"})
_ONE_LINE_CALLS = frozenset({"len", "str", "int", "float", "round", "type"})
# What holds the same ids as what it is given
_CONVERSIONS = frozenset({"tensor", "LongTensor", "array", "asarray", "as_tensor", "list", "from_numpy"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def subword_corpus(cells: list) -> dict:
    """The run-configuration values of a text cut into subword pieces (module docstring), {} where the tokenizer or
    either count is not read."""
    ran = [(cell, quiet_tree(cell)) for cell in cells_that_ran(cells)]
    trees = [tree for _, tree in ran]
    tokenizer = next((m.group(0) for tree in trees if (m := SUBWORD_TOKENIZER.search(unparsed(tree)))), None)
    if tokenizer is None:
        return {}
    counted = _counts_of_one_text(ran, trees)
    if counted is None:
        return {}
    chars, tokens = counted
    found = {"data.subword_tokenizer": tokenizer, "data.text_chars": chars[0], "data.text_chars_line": chars[1],
             "data.text_tokens": tokens[0], "data.text_tokens_line": tokens[1]}
    found.update(batch_values(trees, "".join(_stdout(cell) for cell, _ in ran), "data.tokens_a_batch"))
    return found


def _counts_of_one_text(ran: list, trees: list) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """(characters, tokens), each with its line, printed of one and the same text: a name bound once, to a file's
    read, and names bound only to its whole encoding (a val file's tokens against the train text's characters would
    make a token as long as the ratio of the two files); None where no one text, or more than one, has both."""
    texts = _names_bound_only_to(trees, _reads_a_file) & _names_of_one_file(trees)
    found = []
    for text in sorted(texts):
        encoded = _names_bound_only_to(trees, lambda value: _encodes_whole(value, text))
        chars, tokens = _printed_count(ran, {text}, shapes=False), _printed_count(ran, encoded, shapes=True)
        if chars is not None and tokens is not None:
            found.append((chars, tokens))
    return found[0] if len(found) == 1 else None


def _names_of_one_file(trees: list) -> set[str]:
    """The names whose module-level bindings all read one file: bound once, or re-read from the same path (the
    lecture's closing script cell reads `input.txt` again); a name re-read from another file, or from one the code
    does not name plainly, is two texts."""
    handles, reads, files = _file_handles(trees), {}, {}
    nodes = [node for tree in trees for node in _module_level(tree)]
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and _reads_a_file(node.value):
            reads[id(node.targets[0])] = _file_read(node.value.func.value, handles)
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            files.setdefault(node.id, []).append(reads.get(id(node)))
    return {name for name, read in files.items() if len(read) == 1 or None not in read and len(set(read)) == 1}


def _file_handles(trees: list) -> dict[str, str | None]:
    """name -> the path of `with open(path) as name` / `name = open(path)` (None where bound to more than one)."""
    handles: dict[str, str | None] = {}
    for tree in trees:
        for node in _module_level(tree):
            pairs = [(item.optional_vars, item.context_expr) for item in node.items] if isinstance(node, ast.With) \
                else [(node.targets[0], node.value)] if isinstance(node, ast.Assign) and len(node.targets) == 1 else []
            for target, value in pairs:
                if isinstance(target, ast.Name):
                    path = _opened_path(value)
                    handles[target.id] = path if handles.get(target.id, path) == path else None
    return handles


def _opened_path(value: ast.expr) -> str | None:
    is_open = isinstance(value, ast.Call) and called_name(value.func) == "open" and value.args
    return ast.unparse(value.args[0]) if is_open else None


def _file_read(source: ast.expr, handles: dict) -> str | None:
    """The path a `.read()` reads: `open(path).read()`, or `f.read()` of a handle opened on it."""
    return _opened_path(source) or (handles.get(source.id) if isinstance(source, ast.Name) else None)


def _module_level(tree: ast.AST):
    """The nodes of a cell outside any function, class or lambda it defines (a `data = ...` inside `get_batch` is
    another `data`)."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _names_bound_only_to(trees: list, test) -> set[str]:
    """The names every module-level binding of which (a plain `name = value`) passes `test(value)`."""
    passed: set[str] = set()
    failed: set[str] = set()
    for tree in trees:
        for node in _module_level(tree):
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                (passed if len(names) == len(node.targets) == 1 and test(node.value) else failed).update(names)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.withitem, ast.NamedExpr)):
                target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
                if target is not None:
                    failed.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return passed - failed


def _reads_a_file(value: ast.expr) -> bool:
    """`f.read()`, `open(path).read()`: a whole file's text."""
    return isinstance(value, ast.Call) and called_name(value.func) == "read" and not value.args


def _encodes_whole(value: ast.expr, text: str) -> bool:
    """The value is `encode(text)` of the whole text, as it is or converted (`torch.tensor(encode(text), dtype=...)`,
    `np.array(...)`, `tokenizer.encode(text).ids`); not a slice of it (`encode(text)[:1000]`, a sample) nor one
    truncated (`max_length=`, `truncation=`): their length is not the text's."""
    while True:
        if isinstance(value, ast.Call) and called_name(value.func) in _CONVERSIONS and value.args:
            value = value.args[0]
        elif isinstance(value, ast.Attribute) and value.attr == "ids":
            value = value.value
        else:
            break
    return isinstance(value, ast.Call) and bool(_ENCODES.fullmatch(called_name(value.func))) and bool(value.args) \
        and isinstance(value.args[0], ast.Name) and value.args[0].id == text \
        and not any(k.arg in ("max_length", "truncation") for k in value.keywords)


def _printed_count(ran: list, names: set[str], shapes: bool) -> tuple[int, str] | None:
    """(the count, its line) the prints of `len(name)` (and of `name.shape` where `shapes`) show, the same wherever
    printed; None where none is read or they differ."""
    found = {}
    for cell, tree in ran:
        for print_call, line in _prints_and_their_lines(tree, _stdout(cell)):
            count = _count_in_line(print_call, line, names, shapes)
            if count is not None:
                found.setdefault(count, line)
    return next(iter(found.items())) if len(found) == 1 else None


def _stdout(cell: dict) -> str:
    return ANSI.sub("", "".join(_text(o.get("text")) for o in cell.get("outputs") or []
                                 if isinstance(o, dict) and o.get("output_type") == "stream"
                                 and o.get("name") == "stdout"))


def _text(text) -> str:
    return "".join(part for part in text if isinstance(part, str)) if isinstance(text, list) else \
        text if isinstance(text, str) else ""


def _prints_and_their_lines(tree: ast.Module, stdout: str) -> list[tuple[ast.Call, str]]:
    """Each top-level `print(...)` of the cell with its stdout line, in order, up to the first that may print other
    than one line (module docstring)."""
    lines, paired = stdout.splitlines(), []
    prints = [node.value for node in tree.body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and called_name(node.value.func) == "print" and isinstance(node.value.func, ast.Name)]
    for call, line in zip(prints, lines):
        paired.append((call, line.rstrip()))
        if not _prints_one_line(call):
            break
    return paired


def _prints_one_line(call: ast.Call) -> bool:
    if call.keywords:  # a `sep` or `end` of its own: where its lines break is not counted here
        return False
    return all(_one_line(arg) for arg in call.args)


def _one_line(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return "\n" not in str(node.value)
    if isinstance(node, ast.JoinedStr):
        return all(_one_line(part.value if isinstance(part, ast.FormattedValue) else part) for part in node.values)
    if isinstance(node, ast.Attribute):
        return node.attr in _ONE_LINE_ATTRIBUTES
    return isinstance(node, ast.Call) and called_name(node.func) in _ONE_LINE_CALLS


def _count_in_line(call: ast.Call, line: str, names: set[str], shapes: bool) -> int | None:
    """The count a print of `len(name)` / `name.shape` shows on its line: the line matched in full against the print's
    arguments (their text as written, the count, anything for the rest); None where it does not match or counts no
    name of `names`."""
    parts = [_pattern(arg, names, shapes) for arg in call.args]
    if not any(counted for _, counted in parts):
        return None
    found = re.fullmatch(" ".join(pattern for pattern, _ in parts), line)
    counts = [g for g in found.groups() if g] if found else []
    return int(counts[0].replace(",", "")) if len(counts) == 1 else None


def _pattern(node: ast.expr, names: set[str], shapes: bool) -> tuple[str, bool]:
    """(the regular expression of what `node` prints, whether it captures a count of one of `names`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value), False
    if isinstance(node, ast.JoinedStr):
        parts = [_pattern(part.value if isinstance(part, ast.FormattedValue) else part, names, shapes)
                 for part in node.values]
        return "".join(p for p, _ in parts), any(c for _, c in parts)
    if isinstance(node, ast.Call) and called_name(node.func) == "len" and len(node.args) == 1 \
            and isinstance(node.args[0], ast.Name) and node.args[0].id in names:
        return _COUNT, True
    if shapes and isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name) \
            and node.value.id in names:
        return _SHAPE, True
    return ".*?", False
