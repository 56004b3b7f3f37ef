"""How the report writes names compactly: block ranges (`model.layers.21-23`) and elided names.

Used by the story, the tables, the plots and the damage map alike.
"""
from __future__ import annotations

import re
from typing import Iterable

from ..checkpoints.blocks import block_sort_key
from ..findings import plural  # noqa: F401  (re-exported: the report's notation)


_INDEXED = re.compile(r"^(?P<prefix>.*?)(?P<idx>\d+)$")


def block_ranges(blocks: Iterable[str]) -> str:
    """Blocks written compactly: consecutive indices of one container joined as a range.

    >>> block_ranges(["transformer.h.23", "transformer.h.21", "transformer.h.22", "lm_head"])
    'lm_head, transformer.h.21-23'
    """
    groups: dict[str, list[int]] = {}
    plain: list[str] = []
    for block in sorted(set(blocks), key=block_sort_key):
        m = _INDEXED.match(block)
        if m:
            groups.setdefault(m["prefix"], []).append(int(m["idx"]))
        else:
            plain.append(block)
    parts = plain + [prefix + run for prefix, idx in groups.items() for run in _runs(idx)]
    return ", ".join(sorted(parts, key=block_sort_key))


def _runs(indices: list[int]) -> list[str]:
    runs, start = [], indices[0]
    for prev, cur in zip(indices, indices[1:] + [None]):
        if cur is None or cur != prev + 1:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
            start = cur
    return runs


def elide(name: str, limit: int = 28) -> str:
    """`name` cut to `limit` characters with an ellipsis in the middle (the tail holds the step or index).

    >>> elide("checkpoint-with-a-very-long-name-12000", 20)
    'checkpoi…-name-12000'
    """
    name = str(name)
    if len(name) <= limit:
        return name
    tail = (limit - 1) * 3 // 5
    return name[:limit - 1 - tail] + "…" + name[-tail:]

