"""Tests of the package's import graph: no circle through a package's `__init__`.

No import circle through a package's `__init__`.

`test_import_graph` counts `from .ingest.command_line import x` as a dependency on that submodule
only; but Python runs `forensics/ingest/__init__.py` first, so a module that `ingest/__init__`
imports (as it imports `discover.run_layout`) must not import anything under `ingest`, lazily or not. Read with
`ast`, nothing imported.
"""
from __future__ import annotations

from test_import_graph import _cycles, _graph


def _with_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each edge a -> p.q.m also as a -> p.q and a -> p (the packages Python runs first), where a is outside them."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = set(targets)
        for target in targets:
            parts = target.split(".")
            for n in range(2, len(parts)):
                package = ".".join(parts[:n])
                if package in graph and not module.startswith(package + "."):
                    edges.add(package)
        edges.discard(module)
        out[module] = edges
    return out


def test_no_import_circle_runs_through_a_package_init():
    assert _cycles(_with_parent_packages(_graph())) == []


def test_a_package_importing_its_own_submodules_is_no_circle():
    # ingest/__init__ imports ingest.stdout: the submodule's own package is not a dependency of it
    graph = {"forensics.ingest": {"forensics.ingest.stdout"}, "forensics.ingest.stdout": set()}
    assert _cycles(_with_parent_packages(graph)) == []


def test_a_planted_circle_through_an_init_is_found():
    graph = {"forensics.ingest": {"forensics.discover.run"},
             "forensics.discover.run": {"forensics.ingest.command_line"}, "forensics.ingest.command_line": set()}
    assert _cycles(_with_parent_packages(graph)) == [["forensics.discover.run", "forensics.ingest"]]
