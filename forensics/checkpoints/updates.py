"""How much each block moved between consecutive checkpoints (SIGNALS.md #13), and how its norms grew.

For checkpoints A then B of one run, per block (or module outside the blocks: embeddings, final
norm, lm_head): update_ratio = ‖W_B − W_A‖ / ‖W_A‖ over all the block's weight tensors (elements
finite on both sides), max|W| on each side (against which a dtype's limit can be read), ‖W‖ (the
embedding and lm_head drift), and a bound on each layer's attention logits (`attention_bound`). Pairs
are taken in step order up to the first checkpoint holding NaN/Inf; the diff reads both sides in
bounded chunks (`diff.diff_table`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from ..errors import UnreadableFile
from ..findings import number_or_null
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
        norms_to: block -> ‖W_to‖ over its tensors (embedding and lm_head drift read from these).
        attention_bound_from, attention_bound_to: block -> `attention_bound` on each side (blocks with q/k only).
    """

    from_name: str
    to_name: str
    from_step: int
    to_step: int
    blocks: dict[str, float]
    absmax_from: dict[str, float] = field(default_factory=dict)
    absmax_to: dict[str, float] = field(default_factory=dict)
    nonfinite_blocks: tuple[str, ...] = ()
    norms_to: dict[str, float] = field(default_factory=dict)
    attention_bound_from: dict[str, float] = field(default_factory=dict)
    attention_bound_to: dict[str, float] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return max(self.to_step - self.from_step, 1)

    def to_dict(self) -> dict[str, Any]:
        """One entry of `updates` in `analyze --json`."""
        return {"from": self.from_name, "to": self.to_name, "from_step": self.from_step, "to_step": self.to_step,
                "blocks": {b: number_or_null(r) for b, r in self.blocks.items()},
                "absmax_to": {b: number_or_null(v) for b, v in self.absmax_to.items()},
                "nonfinite_blocks": list(self.nonfinite_blocks),
                "norms_to": {b: number_or_null(v) for b, v in self.norms_to.items()},
                "attention_bound_to": {b: number_or_null(v) for b, v in self.attention_bound_to.items()}}


def checkpoint_updates(checkpoints: list[CheckpointInfo], workers: int | None = None,
                       progress: Callable[[str], None] | None = None,
                       budget: int | None = None) -> tuple[list[UpdateStep], list[str]]:
    """UpdateSteps between consecutive readable checkpoints of known step, up to the first non-finite one;
    and the pairs that could not be compared, with why.

    Each pair reads both checkpoints again. With a `budget` (bytes read in all), the pairs nearest the
    first non-finite checkpoint (or the end) are kept, where a precursor would show; the rest are named."""
    known = [c for c in checkpoints if c.step is not None and c.status in _READABLE]
    pairs = []
    for a, b in zip(known, known[1:]):
        if a.status == "nonfinite":
            break
        pairs.append((a, b))
    pairs, problems = _within_budget(pairs, budget)
    out = []
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


def _within_budget(pairs: list, budget: int | None) -> tuple[list, list[str]]:
    if budget is None:
        return pairs, []
    kept, spent = [], 0
    for a, b in reversed(pairs):
        cost = _bytes(a) + _bytes(b)
        if kept and spent + cost > budget:
            break
        kept.insert(0, (a, b))
        spent += cost
    left = len(pairs) - len(kept)
    note = [f"{left} earlier checkpoint pairs not compared (over the {budget >> 30} GiB reading budget of the "
            f"update ratios); compared from {kept[0][0].name} on"] if left and kept else []
    return kept, note


def _bytes(info: CheckpointInfo) -> int:
    total = 0
    for path in info.ref.files:
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


def _update_step(a: CheckpointInfo, b: CheckpointInfo, frame: pd.DataFrame) -> UpdateStep:
    both = frame[frame["note"].isna()].copy()
    both["module"] = both["tensor"].map(module_of)
    blocks, absmax_a, absmax_b, norms, bound_a, bound_b, bad = {}, {}, {}, {}, {}, {}, []
    for module, part in both.groupby("module", sort=False):
        base = math.sqrt(float((part["l2_a"] ** 2).sum()))
        diff = math.sqrt(float((part["l2_diff"] ** 2).sum()))
        blocks[module] = diff / base if base else math.nan
        absmax_a[module] = float(part["absmax_a"].max())
        absmax_b[module] = float(part["absmax_b"].max())
        norms[module] = math.sqrt(float((part["l2_b"] ** 2).sum()))
        bound_a[module], bound_b[module] = attention_bound(part, "a"), attention_bound(part, "b")
        if (part["n_nonfinite_b"] > 0).any():
            bad.append(module)
            norms[module], bound_b[module] = math.nan, None  # over the finite part only: no measure of the block
    order = sorted(blocks, key=module_sort_key)
    return UpdateStep(a.name, b.name, a.step, b.step, {m: blocks[m] for m in order},
                      {m: absmax_a[m] for m in order}, {m: absmax_b[m] for m in order},
                      tuple(m for m in order if m in bad), {m: norms[m] for m in order},
                      {m: bound_a[m] for m in order if bound_a[m] is not None},
                      {m: bound_b[m] for m in order if bound_b[m] is not None})


# The query/key projections and the norm in front of them, by the names the common model files use.
_QUERY = re.compile(r"(?:^|\.)(?:q_proj|query|wq|q)\.weight$")
_KEY = re.compile(r"(?:^|\.)(?:k_proj|key|wk|k)\.weight$")
_PRE_ATTENTION_NORM = re.compile(r"(?:^|\.)(?:input_layernorm|ln_1|attention_norm|norm1)\.weight$")


def attention_bound(block: pd.DataFrame, side: str) -> float | None:
    """An upper bound on the block's attention logits, for its trend (SIGNALS.md #7): ‖W_q‖·‖W_k‖·max|γ|²,
    with Frobenius norms (≥ the spectral norms of the derived bound, so looser, and free from the diff's
    sums) and γ the pre-attention norm's gain (1 where the block has none named). None without q and k."""
    names = block["tensor"]
    q, k = block[names.str.contains(_QUERY)], block[names.str.contains(_KEY)]
    if q.empty or k.empty:
        return None
    gain = block.loc[names.str.contains(_PRE_ATTENTION_NORM), f"absmax_{side}"]
    g = float(gain.max()) if not gain.empty and gain.notna().all() else 1.0
    return math.sqrt(float((q[f"l2_{side}"] ** 2).sum())) * math.sqrt(float((k[f"l2_{side}"] ** 2).sum())) * g * g
