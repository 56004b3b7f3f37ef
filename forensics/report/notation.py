"""How the report writes names compactly: block ranges (`model.layers.21-23`) and elided names.

Used by the story, the tables, the plots and the damage map alike.
"""
from __future__ import annotations

from pathlib import Path

from ..checkpoints.blocks import block_ranges  # noqa: F401  (re-exported: one notation everywhere)
from ..findings import plural  # noqa: F401  (re-exported: the report's notation)


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



def shown_path(path, root) -> str:
    """A file's path as the report shows it: relative to the run's folder where it lies inside it, else whole.

    >>> shown_path("/runs/a/checkpoint-10/trainer_state.json", Path("/runs/a")), shown_path("/elsewhere/x.log", None)
    ('checkpoint-10/trainer_state.json', '/elsewhere/x.log')
    """
    try:
        return str(Path(path).relative_to(root))
    except (ValueError, TypeError):
        return str(path)
