"""How much each block moved between consecutive checkpoints (SIGNALS.md #13).

For checkpoints A then B of one run, per block (or module outside the blocks: embeddings, final
norm, lm_head): update_ratio = ‖W_B − W_A‖ / ‖W_A‖ over all the block's weight tensors (elements
finite on both sides), and max|W| on each side, against which a dtype's limit can be read. Pairs
are taken in step order up to the first checkpoint holding NaN/Inf; the diff reads both sides in
bounded chunks (`diff.diff_table`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from ..errors import UnreadableFile
from .blocks import module_of, module_sort_key
from .diff import diff_table
from .types import CheckpointInfo

_READABLE = ("ok", "bad", "nonfinite")


@dataclass(frozen=True)
class UpdateStep:
    """The change from one checkpoint to the next, per block.

    Fields:
        from_name, to_name, from_step, to_step: the two checkpoints.
        blocks: block -> ‖W_to − W_from‖ / ‖W_from‖ (finite elements), in block order.
        absmax_from, absmax_to: block -> the largest finite |W| on each side.
        nonfinite_blocks: blocks holding NaN/Inf in `to`.
    """

    from_name: str
    to_name: str
    from_step: int
    to_step: int
    blocks: dict[str, float]
    absmax_from: dict[str, float] = field(default_factory=dict)
    absmax_to: dict[str, float] = field(default_factory=dict)
    nonfinite_blocks: tuple[str, ...] = ()

    @property
    def steps(self) -> int:
        return max(self.to_step - self.from_step, 1)

    def to_dict(self) -> dict[str, Any]:
        """One entry of `updates` in `analyze --json`."""
        return {"from": self.from_name, "to": self.to_name, "from_step": self.from_step, "to_step": self.to_step,
                "blocks": {b: _finite_or_none(r) for b, r in self.blocks.items()},
                "absmax_to": {b: _finite_or_none(v) for b, v in self.absmax_to.items()},
                "nonfinite_blocks": list(self.nonfinite_blocks)}


def _finite_or_none(value: float) -> float | None:
    return float(value) if value == value and not math.isinf(value) else None


def checkpoint_updates(checkpoints: list[CheckpointInfo], workers: int | None = None,
                       progress: Callable[[str], None] | None = None) -> tuple[list[UpdateStep], list[str]]:
    """UpdateSteps between consecutive readable checkpoints of known step, up to the first non-finite one;
    and the pairs that could not be compared, with why."""
    known = [c for c in checkpoints if c.step is not None and c.status in _READABLE]
    pairs = []
    for a, b in zip(known, known[1:]):
        if a.status == "nonfinite":
            break
        pairs.append((a, b))
    out, problems = [], []
    for i, (a, b) in enumerate(pairs, 1):
        if progress:
            progress(f"comparing checkpoints {i} of {len(pairs)}: {a.name} -> {b.name}")
        try:
            table = diff_table(a.ref, b.ref, workers=workers)
        except UnreadableFile as err:
            problems.append(f"{a.name} -> {b.name}: {err}")
            continue
        out.append(_update_step(a, b, table.frame))
    return out, problems


def _update_step(a: CheckpointInfo, b: CheckpointInfo, frame: pd.DataFrame) -> UpdateStep:
    both = frame[frame["note"].isna()].copy()
    both["module"] = both["tensor"].map(module_of)
    blocks, absmax_a, absmax_b, bad = {}, {}, {}, []
    for module, part in both.groupby("module", sort=False):
        base = math.sqrt(float((part["l2_a"] ** 2).sum()))
        diff = math.sqrt(float((part["l2_diff"] ** 2).sum()))
        blocks[module] = diff / base if base else math.nan
        absmax_a[module] = float(part["absmax_a"].max())
        absmax_b[module] = float(part["absmax_b"].max())
        if (part["n_nonfinite_b"] > 0).any():
            bad.append(module)
    order = sorted(blocks, key=module_sort_key)
    return UpdateStep(a.name, b.name, a.step, b.step, {m: blocks[m] for m in order},
                      {m: absmax_a[m] for m in order}, {m: absmax_b[m] for m in order},
                      tuple(m for m in order if m in bad))
