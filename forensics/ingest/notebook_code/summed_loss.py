"""A hand-written loop that prints the epoch's SUMMED loss: `total_loss = 0`, then `total_loss += loss.item()` for each
batch of a DataLoader, then `print(f"Epoch: {epoch + 1}, Loss: {total_loss:.4f}")`, never divided by the number of
batches. The number printed is then the batch count times a per-batch loss, and every level read from it (a start
against ln V, a loss under 1 nat) is that many times off.

stopstressingmeout_Next-Word-Prediction-Using-LSTM: 555 windows, `DataLoader(dataset, batch_size=32)` (18 batches),
an LSTM over 284 words; the cell prints 101.03 at epoch 1 (5.61 a batch, ln 284 = 5.65: a fresh head), read as 7.8x
the uniform guess where it is the guess itself. The pattern is common in hand-written PyTorch loops; told here from
the cell's code: an accumulator set to 0 in an outer loop, a loss added to it in an inner loop over a loader, and
printed bare (no `/ len(...)` in the print) after the inner loop. The batch count is told where the notebook shows
it: a cell whose value is `len(loader)`, or `len(dataset)` with the loader's literal `batch_size` (ceil, or floor
under `drop_last=True`); else it is unknown (`SummedLoss.batches` None), and the run's loss is marked a sum of an
unknown count (`sum_of_unknown_count`): only its shape can be judged, not its level.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from .cells import _source, parse_quietly, python_of
from .syntax import called_name

# the label the print puts before the summed value: `Loss: ` of `f"Epoch: {e}, Loss: {total_loss:.4f}"`
_LABEL = re.compile(r"([A-Za-z][\w ]*?\s*[:=]\s*)$")
# iterables a loop may wrap its loader in: `enumerate(loader)`, `tqdm(loader)`
_WRAPPERS = ("enumerate", "tqdm", "iter")


@dataclass(frozen=True)
class SummedLoss:
    """A cell that prints an epoch's summed batch losses: the label before the printed sum, and the batch count the
    notebook tells (None where it does not)."""
    label: str
    batches: int | None


def summed_loss_cells(cells: list[dict]) -> dict[int, SummedLoss]:
    """The cells (by index into `cells`) whose loop prints an epoch's summed loss undivided (module docstring)."""
    trees = {i: _parsed(cell) for i, cell in enumerate(cells) if cell.get("cell_type") == "code"}
    found: dict[int, SummedLoss] = {}
    for i, tree in trees.items():
        summed = _summed_print(tree) if tree is not None else None
        if summed:
            label, loader = summed
            found[i] = SummedLoss(label, _batches(loader, cells, trees, before=i))
    return found


def sum_of_unknown_count(cells: list[dict]) -> bool:
    """Whether a cell prints an epoch's summed loss whose batch count the notebook does not tell: its levels are that
    unknown many times a batch's (`loss.epoch_sum_unscaled`, where the level rules stay silent)."""
    return any(summed.batches is None for summed in summed_loss_cells(cells).values())


def divided_lines(text: str, summed: SummedLoss) -> str:
    """A cell's printed text, each number after the summed loss's label divided by the batch count."""
    pattern = re.compile(re.escape(summed.label) + r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")
    return pattern.sub(lambda m: f"{summed.label}{float(m.group(1)) / summed.batches:.6g}", text)


def _parsed(cell: dict) -> ast.AST | None:
    try:
        return parse_quietly(python_of(_source(cell)))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _summed_print(tree: ast.AST) -> tuple[str, str] | None:
    """(label, loader name) of an outer loop that zeroes an accumulator, adds a loss to it in an inner loop over a
    loader and prints it bare after that loop; else None."""
    for outer in (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))):
        zeroed = {t.id for n in outer.body if isinstance(n, ast.Assign) and _is_zero(n.value)
                  for t in n.targets if isinstance(t, ast.Name)}
        for inner in (n for n in outer.body if isinstance(n, ast.For)):
            loader = _loader_name(inner.iter)
            added = zeroed & _losses_added(inner)
            for name in added - _divided(outer):
                label = _bare_print_label(outer, name)
                if loader and label:
                    return label, loader
    return None


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0


def _loader_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call) and called_name(node.func) in _WRAPPERS and node.args:
        node = node.args[0]
    return node.id if isinstance(node, ast.Name) else None


def _losses_added(loop: ast.For) -> set[str]:
    """The names a loop adds a loss to: `total += loss.item()`, `total = total + loss.item()`."""
    added = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
                and _mentions_loss(node.value):
            added.add(node.target.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
            name = node.targets[0].id
            sides = (node.value.left, node.value.right)
            if any(isinstance(s, ast.Name) and s.id == name for s in sides) and any(_mentions_loss(s) for s in sides
                                                                                    if not isinstance(s, ast.Name)
                                                                                    or s.id != name):
                added.add(name)
    return added


def _divided(loop: ast.AST) -> set[str]:
    """The names a loop divides in place before printing them: `total /= len(loader)`, `total = total / n`
    (BlayvasD_GPT-Histories, hyunjun2001_transformers-book-review: a mean, printed bare)."""
    divided = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div) and isinstance(node.target, ast.Name):
            divided.add(node.target.id)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div):
            divided.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return divided


def _mentions_loss(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Name) and "loss" in n.id.lower() for n in ast.walk(node))


def _bare_print_label(outer: ast.AST, name: str) -> str | None:
    """The label before `name` in an f-string print of the outer loop's own body where `name` is printed as is (not
    divided); None where it is printed divided anywhere or not at all."""
    label = None
    for node in ast.walk(outer):
        if not (isinstance(node, ast.Call) and called_name(node.func) == "print"):
            continue
        for arg in node.args:
            if not isinstance(arg, ast.JoinedStr):
                continue
            for before, part in zip([None] + arg.values[:-1], arg.values):
                if not (isinstance(part, ast.FormattedValue) and _reads(part.value, name)):
                    continue
                if not (isinstance(part.value, ast.Name)):
                    return None  # `{total_loss / len(loader)}`: a mean
                text = before.value if isinstance(before, ast.Constant) and isinstance(before.value, str) else ""
                match = _LABEL.search(text)
                label = label or (match.group(1).lstrip() if match else None)
    return label


def _reads(node: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _batches(loader: str, cells: list[dict], trees: dict, before: int) -> int | None:
    """The loader's batch count as the cells above the training show it (module docstring), or None."""
    built = _loader_built(loader, [t for i, t in trees.items() if i < before and t is not None])
    shown = {}
    for i, tree in trees.items():
        if i < before and tree is not None and len(tree.body) >= 1 and isinstance(tree.body[-1], ast.Expr):
            value = tree.body[-1].value
            if isinstance(value, ast.Call) and called_name(value.func) == "len" and len(value.args) == 1 \
                    and isinstance(value.args[0], ast.Name):
                number = _int_result(cells[i])
                if number is not None:
                    shown[value.args[0].id] = number
    if loader in shown:
        return shown[loader]
    if built is None:
        return None
    dataset, batch_size, drop_last = built
    if dataset not in shown or not batch_size:
        return None
    examples = shown[dataset]
    return examples // batch_size if drop_last else math.ceil(examples / batch_size)


def _loader_built(loader: str, trees: list) -> tuple[str, int, bool] | None:
    """(dataset name, literal batch size, drop_last) of the last `loader = DataLoader(dataset, batch_size=B)`."""
    built = None
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == loader for t in node.targets) \
                    and isinstance(node.value, ast.Call) and called_name(node.value.func) == "DataLoader":
                call = node.value
                keywords = {k.arg: k.value for k in call.keywords if k.arg}
                dataset = call.args[0] if call.args else keywords.get("dataset")
                size = call.args[1] if len(call.args) > 1 else keywords.get("batch_size")
                drop = keywords.get("drop_last")
                if isinstance(dataset, ast.Name) and isinstance(size, ast.Constant) and isinstance(size.value, int):
                    built = (dataset.id, size.value, isinstance(drop, ast.Constant) and drop.value is True)
    return built


def _int_result(cell: dict) -> int | None:
    """The integer a cell's execute_result shows (`555` of `len(dataset)`), or None."""
    for output in cell.get("outputs") or []:
        if isinstance(output, dict) and output.get("output_type") in ("execute_result", "pyout"):
            data = output.get("data") if isinstance(output.get("data"), dict) else output
            plain = data.get("text/plain", data.get("text"))
            plain = "".join(plain) if isinstance(plain, list) else plain if isinstance(plain, str) else ""
            if plain.strip().isdigit():
                return int(plain.strip())
    return None
