"""The package's import graph: no circles, and no module of a lower layer imports a higher one.

Read from the source with `ast` (nothing is imported), so imports inside functions count too: a
lazy import that reaches up a layer is still a dependency in the wrong direction. The layers are the
ones docs/ARCHITECTURE.md draws; a new top-level module or package must be placed in one here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "forensics"

# Lowest first. A module may import its own layer and the layers below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "_lazy", "errors", "findings", "config", "torchpickle", "lfs", "metric_names", "table_headers",
     "tracker_run", "restarts", "decoding"),                                # types
    ("discover", "timeline", "log_attempts", "rival_logs", "ingest", "checkpoints", "export"),  # read, measure
    ("analyzers", "causes", "profile"),                                     # judge
    ("report",),                                                            # render
    ("analysis", "run_findings", "bisection", "compare", "watch", "store", "replay"),  # use cases
    ("cli", "cli_output", "__main__", "forensics"),                         # shells and the package
)
LOWER = ("discover", "timeline", "log_attempts", "ingest", "checkpoints")
JUDGING_OR_RENDERING = ("analyzers", "causes", "report")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules `path` imports (`from x import name` of a submodule counts as that submodule)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            submodules = {f"{target}.{a.name}" for a in node.names} & modules
            # `from . import megatron_args` depends on that submodule, not on the package's __init__.
            out |= submodules or ({target} & modules)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
    out.discard(name)
    return out


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(paths)) for name, path in paths.items()}


def _area(module: str) -> str:
    """forensics.checkpoints.scan -> checkpoints; forensics -> forensics."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _layer(area: str) -> int:
    for i, names in enumerate(LAYERS):
        if area in names:
            return i
    raise AssertionError(f"{area} is in no layer: place it in LAYERS (and docs/ARCHITECTURE.md)")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_package_has_no_import_circles():
    assert _cycles(_graph()) == []


def test_no_module_imports_a_higher_layer():
    upward = [f"{a} -> {b}" for a, targets in sorted(_graph().items()) for b in sorted(targets)
              if _layer(_area(b)) > _layer(_area(a))]
    assert upward == []


def test_reading_and_measuring_never_import_judging_or_rendering():
    wrong = [f"{a} -> {b}" for a, targets in sorted(_graph().items()) for b in sorted(targets)
             if _area(a) in LOWER and _area(b) in JUDGING_OR_RENDERING]
    assert wrong == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
])
def test_the_cycle_finder_finds_a_planted_circle_and_nothing_else(graph, expected):
    assert _cycles(graph) == expected


def test_every_module_of_the_package_is_seen_and_in_a_layer():
    graph = _graph()
    assert {"forensics.bisection", "forensics.checkpoints.bisection", "forensics.torchpickle"} <= set(graph)
    assert "forensics.checkpoints.entries" in graph["forensics.checkpoints.safetensors_file"]
    for module in graph:
        _layer(_area(module))
