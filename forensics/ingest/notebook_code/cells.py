"""A notebook's code cells as the notebook-code readers see them: which cells ran (an execution count or an output;
where the counts were cleared, the cells up to the last output), their source with shell and magic lines blanked,
parsed with `ast` (never run) and quietly; the shell commands they ran."""
from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
import warnings

from .syntax import called_name
from .arguments import model_classes_followed, trainer_subclasses_followed
from .switches import switches_of_each_cell, without_dead_branches

SHELL_OR_MAGIC = re.compile(r"^\s*[!%?]|\?\s*$")
_NOT_PYTHON_CELL = re.compile(r"^\s*%%(?!capture|time|timeit)")
_MAX_CELL_CHARS = 200_000
# A cell that hands the training to a program (`!python train.py`, `!accelerate launch`, `%run train.py`): its
# precision is that program's, which the notebook's code does not show (`!pip install`, `!wget` are no training; nor
# is an evaluation script, Chrisgr1_openai-cookbook's `!python lm-evaluation-harness/main.py --model hf-causal ...`)
SHELL_TRAINING = re.compile(r"(?m)^\s*(?:!\s*(?:python3?\b(?![ \t]+(?:-m[ \t]+)?[\w./-]*eval)|(?:torchrun|accelerate|"
                             r"deepspeed|llamafactory-cli|axolotl|tune|litgpt|swift|bash|sh|composer|lightning)\b)"
                             r"|%run\b|%%bash|%%sh)")


def _source(cell: dict) -> str:
    """A cell's code: a list of lines (nbformat 4's `source`, nbformat 3's `input`) or one string."""
    source = cell.get("source", cell.get("input"))
    return "".join(part for part in source if isinstance(part, str)) if isinstance(source, list) else \
        source if isinstance(source, str) else ""


def shell_commands(cells: list) -> str:
    """The shell lines of the cells that ran (`!python train.py \\` and the lines it continues on), without the `!`."""
    lines: list[str] = []
    for cell in cells_that_ran(cells):
        continued = False
        for line in _source(cell).splitlines():
            shell = line.lstrip().startswith("!")
            if shell or continued:
                lines.append(line.lstrip()[1:] if shell else line)
            continued = (shell or continued) and line.rstrip().endswith("\\")
    return "\n".join(lines)


def cells_that_ran(cells: list) -> list[dict]:
    """Code cells with an execution count or an output; where the notebook was saved with every count cleared (some
    editors and export tools do), every code cell up to the last one that shows an output; where only some cells
    lost their counts (the cells after a few counted ones), also the uncounted cells without output just before an
    uncounted one that shows an output, back to a counted cell or to one that would have shown something had it run (a
    print, a value on its last line): those ran too, printing nothing (a model loaded, a config built, before the
    training cell whose table shows)."""
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    if not any(_count(c) is not None for c in code):  # every count cleared: all up to the last cell that shows
        shown = [i for i, c in enumerate(code) if c.get("outputs")]
        return code[: shown[-1] + 1] if shown else []
    ran = {i for i, c in enumerate(code) if _count(c) is not None or c.get("outputs")}
    for i, cell in enumerate(code):
        if _count(cell) is not None or not cell.get("outputs"):
            continue
        j = i - 1
        while j >= 0 and _count(code[j]) is None and not code[j].get("outputs") and not _would_show(code[j]):
            ran.add(j)
            j -= 1
    ran |= _sole_definers_of_names_read_later(code, ran)
    return [c for i, c in enumerate(code) if i in ran]


def cells_meant(cells: list) -> list[dict]:
    """The code cells whose code, run or not, says what the run was meant to be (an adapter set up, weights frozen):
    where the notebook carries execution counts, the cells that ran (`cells_that_ran`), since a cell left with no
    count and no output there never ran (AliN75_Memorization: its 'freeze all but blocks 5, 10, 15' cell sits
    uncounted between the cells counted 10 and 11, and the Trainer's banner counts 1,315,575,808 weights trainable);
    where every count was cleared, every code cell (nothing tells which ran)."""
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    return cells_that_ran(code) if any(_count(c) is not None for c in code) else code


def _sole_definers_of_names_read_later(code: list[dict], ran: set[int]) -> set[int]:
    """Uncounted cells without output that alone assign a name a later counted cell reads (the arguments built in a
    cell edited after it ran, then handed to the training cell): had they not run, that cell would have stopped on
    a NameError before its output. (Where the later cells lost their counts too, the rule of `cells_that_ran` for
    them stands: a silent cell that would have printed says the cells before it did not run.)"""
    trees = [quiet_tree(cell) for cell in code]
    assigned = [_assigned_names(tree) for tree in trees]
    read = [{n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} for tree in trees]
    found = set()
    for i, names in enumerate(assigned):
        if i in ran or not names:
            continue
        sole = {name for name in names if not any(name in other for k, other in enumerate(assigned) if k != i)}
        if any(_count(code[j]) is not None and sole & read[j] for j in range(i + 1, len(code))):
            found.add(i)
    return found


def python_of(source: str) -> str:
    """A cell's source as Python: shell and magic lines blanked, then the indent every line shares removed - IPython
    runs a cell indented as a whole (Abeshith_FineTuning_LanguageModels: ' training_args = TrainingArguments(..., fp16
    = True)', one space on every line, ran and fed the SFTTrainer), which `ast.parse` rejects ('unexpected indent').
    IPython reads `%` and `!` as its own only where a statement starts: where blanking such lines breaks code that
    parses as it stands, they were Python (Rogithgoud_text-transformer's train.py continues a `print("... %d"` on a
    line that starts `% (len(text), ...)`), and the source is kept whole."""
    lines = source.splitlines()
    kept = ["" if SHELL_OR_MAGIC.match(line) else line for line in lines]
    python = textwrap.dedent("\n".join(kept))
    if kept != lines and not _parses(python) and _parses(source):
        return source
    return python


def _parses(code: str) -> bool:
    try:
        parse_quietly(code)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def quiet_tree(cell: dict) -> ast.Module:
    code = python_of(_source(cell))
    try:
        return parse_quietly(code)
    except (SyntaxError, ValueError, RecursionError):
        return ast.Module(body=[], type_ignores=[])


def _assigned_names(tree: ast.Module) -> set[str]:
    """The names a cell's top-level statements assign (`args = TrainingArguments(...)`) or define (`class CONFIG:`)."""
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    targets += [node.target for node in tree.body if isinstance(node, ast.AnnAssign)]
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    return {t.id for t in targets if isinstance(t, ast.Name)} | classes


def _would_show(cell: dict) -> bool:
    """Whether a cell shows something when it runs: a print or display call, or a value on its last line (Jupyter
    shows it). A cell that does not parse is taken to (nothing is assumed to have run silently)."""
    code = python_of(_source(cell))
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return True
    return any(isinstance(node, ast.Call) and called_name(node.func) in ("print", "display", "pprint")
               for node in _run_when_the_cell_runs(tree))


def _run_when_the_cell_runs(tree: ast.AST):
    """The nodes of a cell that run when it runs: a function's body runs when the function is called, not where it is
    defined (omardaklaoui_LLM_from_Scratch-GPT2's uncounted cell defining `train_model_simple`, a print in its loop,
    shows nothing when it runs)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        yield from _run_when_the_cell_runs(node)


def _count(cell: dict):
    """A cell's execution count (nbformat 3 named it `prompt_number`)."""
    return cell.get("execution_count", cell.get("prompt_number"))


def parsed_cells(cells: list) -> list:
    """The trees of the cells that ran, with the script a `%%writefile train.py` cell writes where a shell line
    that ran launches it (`!accelerate launch train.py`): that code ran too; a model class held in a name called by
    the class's own name (`arguments.model_classes_followed`); a Trainer subclass of the notebook's own called as the
    Trainer it subclasses (`arguments.trainer_subclasses_followed`)."""
    return trainer_subclasses_followed(model_classes_followed(list(_trees_of_cells_that_ran(cells))))


def _trees_of_cells_that_ran(cells: list):
    return (tree for _, _, tree in cells_and_trees_that_ran(cells))


def cells_and_trees_that_ran(cells: list):
    """(cell, the code parsed, its tree) of each cell that ran and parsed (`parsed_cells`, without the follows),
    without the branches that never ran (`switches`: the literal switches are read across every cell that ran, each
    test decided by the switches bound before it ran; a cell that ran but does not parse leaves the names it binds
    undecided)."""
    ran = list(_parsed_that_ran(cells))
    parsed = [(cell, code, tree) for cell, code, tree in ran if tree is not None]
    unread = frozenset(name for _, code, tree in ran if tree is None for name in _NAMES_AT_LINE_START.findall(code))
    switches = switches_of_each_cell([tree for _, _, tree in parsed], [_count(cell) for cell, _, _ in parsed], unread)
    return [(cell, code, _without_dead_branches(tree, *switched))
            for (cell, code, tree), switched in zip(parsed, switches)]


def _without_dead_branches(tree: ast.AST, switches: dict, ready_at: dict) -> ast.AST:
    try:
        return without_dead_branches(tree, switches, ready_at)
    except RecursionError:  # (parse_quietly refuses code nested too deep to walk; kept as parsed if one slips by)
        return tree


# A name a cell that ran but does not parse binds (automagic `pip install x` beside `use_4bit = True`, `x = !ls`)
_NAMES_AT_LINE_START = re.compile(r"(?m)^[ \t]*(\w+)[ \t]*=(?!=)")  # ([ \t], not \s: across blank lines it backtracks)


def _parsed_that_ran(cells: list):
    launched = {name.rsplit("/", 1)[-1] for name in _SCRIPT.findall(shell_commands(cells))}
    for cell in cells_that_ran(cells):
        source = _source(cell)
        written = _WRITEFILE.match(source)
        if written and written.group(1).rsplit("/", 1)[-1] in launched:
            source = source.partition("\n")[2]
        if len(source) > _MAX_CELL_CHARS or _NOT_PYTHON_CELL.match(source):
            continue
        code = python_of(source)
        try:
            tree = parse_quietly(code)
        except (SyntaxError, ValueError, RecursionError):
            tree = None  # a cell of another language, or one that never parsed: only the names it binds are read
        yield cell, code, tree


_WRITEFILE = re.compile(r"\s*%%writefile[ \t]+(?:-a[ \t]+)?(\S+\.py)[ \t]*(?:\n|$)")
_SCRIPT = re.compile(r"(?<![\w.-])([\w./-]+\.py)(?![\w.])")


def parse_quietly(code: str, mode: str = "exec") -> ast.AST:
    """`ast.parse` of someone else's code with the warnings its compiler gives silenced (`invalid escape sequence
    '\\s'` in a user's regex is a DeprecationWarning, a SyntaxWarning from Python 3.12): the analysis reads the code,
    it does not run or fix it, and must not warn, nor, under `-W error`, lose the cell."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(code, mode=mode)
    if _deeper_than(tree, _DEEPEST):
        raise RecursionError(f"code nested over {_DEEPEST} levels deep")  # as a cell that does not parse
    return tree


# The readers walk a tree recursively, several frames a level; code nested deeper than this (a generated
# `x + x + ...` of a thousand terms) would exhaust Python's recursion limit in one of them, so it is refused here,
# once, where every caller already passes over a cell that does not parse. Written code stays far under it.
_DEEPEST = 200


def _deeper_than(tree: ast.AST, limit: int) -> bool:
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


_FULL_LINE_COMMENT = re.compile(r"(?m)^[ \t]*#.*$")


def without_comments(code: str) -> str:
    """The code less its `#` comments, which run nothing (bmcmahan2016_cs-269-SLG's '# ... sent to device (GPU/TPU)'
    above a plain fp32 loop); where the code does not tokenize, less its whole-line comments only."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return _FULL_LINE_COMMENT.sub("", code)
    lines = code.splitlines(keepends=True)
    for token in reversed([t for t in tokens if t.type == tokenize.COMMENT]):
        (row, start), (_, end) = token.start, token.end
        lines[row - 1] = lines[row - 1][:start] + lines[row - 1][end:]
    return "".join(lines)
