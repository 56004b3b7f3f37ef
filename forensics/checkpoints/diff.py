"""Compare two checkpoints tensor by tensor: which moved, by how much, which went non-finite.

    >>> diff_checkpoints("ckpt-3000", "ckpt-3600").head()          # doctest: +SKIP
              tensor            block  rel_change  became_nonfinite ...

Both checkpoints are streamed chunk by chunk in step (same element ranges side by side), so
memory stays bounded by the chunk size whatever the checkpoints weigh.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import UnreadableFile
from .blocks import block_of, block_sort_key
from .dtypes import WIDEN, Scratch, magnitude_value
from .scan import as_ref, close_files, open_files
from .stats import Partial, full_chunk, stats_row
from .units import DEFAULT_CHUNK_BYTES

DIFF_COLUMNS = [
    "tensor", "block", "rel_change", "rel_change_finite", "became_nonfinite", "n_nonfinite_a", "n_nonfinite_b",
    "absmax_a", "absmax_b", "l2_a", "l2_b", "l2_diff", "dtype", "shape", "note",
]


def diff_checkpoints(a, b, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress=None) -> pd.DataFrame:
    """One row per tensor name of either checkpoint (columns DIFF_COLUMNS), largest change first.

    rel_change is ||b - a|| / ||a|| in float64 over the elements finite in both, except that it
    is inf when b holds a NaN/Inf where a was finite (rel_change_finite keeps the finite part).
    became_nonfinite: a is all finite, b is not. A tensor in only one checkpoint gets a note
    and that side's counts. Raises UnreadableFile when either checkpoint has no readable file.
    """
    ra, rb = as_ref(a), as_ref(b)
    files_a, skipped_a = open_files(ra)
    files_b, skipped_b = open_files(rb)
    try:
        for files, skipped in ((files_a, skipped_a), (files_b, skipped_b)):
            if not files and skipped:
                raise UnreadableFile(skipped[0].path, skipped[0].reason)
        side_a = {e.name: (wf, e) for wf in files_a for e in wf.entries}
        side_b = {e.name: (wf, e) for wf in files_b for e in wf.entries}
        scratch_a, scratch_b = Scratch(chunk_bytes), Scratch(chunk_bytes)
        rows = []
        for name in sorted(side_a.keys() | side_b.keys(), key=block_sort_key):
            if progress:
                progress(f"diff {name}")
            rows.append(_diff_row(name, side_a.get(name), side_b.get(name), scratch_a, scratch_b))
    finally:
        close_files(files_a + files_b)
    frame = pd.DataFrame(rows, columns=DIFF_COLUMNS)
    frame.attrs["skipped"] = skipped_a + skipped_b
    order = frame["rel_change"].fillna(-1.0)
    return frame.assign(_o=order).sort_values(["_o", "n_nonfinite_b"], ascending=False, kind="stable") \
        .drop(columns="_o").reset_index(drop=True)


def _diff_row(name: str, a, b, scratch_a: Scratch, scratch_b: Scratch) -> dict:
    row = dict.fromkeys(DIFF_COLUMNS, math.nan)
    row.update(tensor=name, block=block_of(name), became_nonfinite=False, note=None, n_nonfinite_a=0, n_nonfinite_b=0)
    entry = (b or a)[1]
    row.update(dtype=entry.dtype, shape=entry.shape)
    if a is None or b is None:
        return _one_side(row, a or b, "a" if a else "b", scratch_a if a else scratch_b)
    (wa, ea), (wb, eb) = a, b
    if ea.problem or eb.problem:
        row["note"] = ea.problem or eb.problem
    elif ea.shape != eb.shape:
        row["note"] = f"shape changed from {list(ea.shape)} to {list(eb.shape)}"
    elif not (ea.info.is_float and eb.info.is_float):
        row["note"] = "integer type: not compared"
    else:
        row.update(_compare(wa, ea, wb, eb, scratch_a, scratch_b))
    return row


def _one_side(row: dict, side, which: str, scratch: Scratch) -> dict:
    wf, entry = side
    row["note"] = f"only in {which}"
    if entry.info is None or not entry.numel:
        return row
    part = Partial()
    for bits in wf.chunks(entry, 0, entry.numel, scratch):
        full_chunk(entry.info, bits, scratch, part)
    stats = stats_row(entry, part)
    row.update({f"n_nonfinite_{which}": part.n_nan + part.n_inf, f"absmax_{which}": stats["absmax"],
                f"l2_{which}": stats["l2"]})
    return row


def _compare(wa, ea, wb, eb, scratch_a: Scratch, scratch_b: Scratch) -> dict:
    acc = _PairSums()
    for bits_a, bits_b in zip(wa.chunks(ea, 0, ea.numel, scratch_a), wb.chunks(eb, 0, eb.numel, scratch_b)):
        acc.add(ea.info, bits_a, scratch_a, eb.info, bits_b, scratch_b)
    return acc.row(ea, eb)


class _PairSums:
    """Sums over chunk pairs: ||a||^2, ||b||^2, ||b - a||^2 where both are finite, counts, absmax bits."""

    def __init__(self):
        self.sq_a = self.sq_b = self.sq_a_both = self.sq_diff = 0.0
        self.n_bad_a = self.n_bad_b = self.n_new_bad = 0
        self.top_a = self.top_b = -1

    def add(self, info_a, bits_a, scratch_a, info_b, bits_b, scratch_b) -> None:
        fin_a, top_a = _finite_mask(info_a, bits_a, scratch_a)
        fin_b, top_b = _finite_mask(info_b, bits_b, scratch_b)
        self.top_a, self.top_b = max(self.top_a, top_a), max(self.top_b, top_b)
        va = WIDEN[info_a.code](bits_a, scratch_a).astype(np.float64)
        vb = WIDEN[info_b.code](bits_b, scratch_b).astype(np.float64)
        if fin_a is not None or fin_b is not None:
            both = _and(fin_a, fin_b)
            self.n_bad_a += 0 if fin_a is None else int(va.size - np.count_nonzero(fin_a))
            self.n_bad_b += 0 if fin_b is None else int(vb.size - np.count_nonzero(fin_b))
            if fin_b is not None:  # NaN/Inf in b where a was finite
                self.n_new_bad += int(np.count_nonzero(~fin_b if fin_a is None else ~fin_b & fin_a))
            self.sq_a += _sumsq(va[fin_a] if fin_a is not None else va)
            self.sq_b += _sumsq(vb[fin_b] if fin_b is not None else vb)
            va, vb = va[both], vb[both]
            self.sq_a_both += _sumsq(va)
        else:
            sq = _sumsq(va)
            self.sq_a += sq
            self.sq_a_both += sq
            self.sq_b += _sumsq(vb)
        np.subtract(vb, va, out=vb)
        self.sq_diff += _sumsq(vb)

    def row(self, ea, eb) -> dict:
        diff = math.sqrt(self.sq_diff)
        base = math.sqrt(self.sq_a_both)
        finite_change = diff / base if base else (math.inf if diff else 0.0)
        return {
            "rel_change": math.inf if self.n_new_bad else finite_change,
            "rel_change_finite": finite_change,
            "became_nonfinite": self.n_bad_a == 0 and self.n_bad_b > 0,
            "n_nonfinite_a": self.n_bad_a, "n_nonfinite_b": self.n_bad_b,
            "absmax_a": magnitude_value(ea.info, self.top_a) if self.top_a >= 0 else math.nan,
            "absmax_b": magnitude_value(eb.info, self.top_b) if self.top_b >= 0 else math.nan,
            "l2_a": math.sqrt(self.sq_a), "l2_b": math.sqrt(self.sq_b), "l2_diff": diff,
        }


def _finite_mask(info, bits, scratch) -> tuple[np.ndarray | None, int]:
    """(mask of finite elements, or None when all are; largest finite magnitude bits)."""
    mag = np.bitwise_and(bits, info.mag_mask, out=scratch.array("mag", info.bits, bits.size))
    top = int(mag.max())
    if top < info.nonfinite_from:
        return None, top
    finite = mag < info.nonfinite_from
    return finite, int(mag[finite].max()) if finite.any() else -1


def _and(fin_a, fin_b) -> np.ndarray:
    if fin_a is None:
        return fin_b
    return fin_a if fin_b is None else fin_a & fin_b


def _sumsq(values: np.ndarray) -> float:
    return float(np.einsum("i,i->", values, values))  # float64 values, float64 accumulation
