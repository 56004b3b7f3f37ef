"""Compare two checkpoints tensor by tensor: which moved, by how much, which went non-finite.

    >>> from pathlib import Path
    >>> import forensics
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> d = diff_checkpoints(run / "checkpoint-20", run / "checkpoint-40", workers=1)
    >>> sorted(set(d.loc[d["became_nonfinite"], "block"]))
    ['model.layers.1']

Both checkpoints are streamed chunk by chunk side by side (the same element range of a tensor
from each), so memory stays bounded by the chunk size whatever they weigh; tensors are split
into units and compared across processes like a scan (units.py).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from ..errors import BadOption, UnreadableFile
from ..findings import Skipped, json_safe
from .blocks import block_of, block_sort_key
from .dtypes import WIDEN, WIDEN_FOR_SUMS, Scratch, magnitude_value
from .entries import chunk_elements
from .readers import open_weight_file
from .scan import as_ref, close_files, open_files
from .stats import Partial, f32_sums_safe, full_chunk, quick_chunk, stats_row, sum_of_squares
from .types import TensorTable
from .units import DEFAULT_CHUNK_BYTES, map_in_pool, split_entries, unit_target, worth_a_pool

DIFF_COLUMNS = [
    "tensor", "block", "rel_change", "rel_change_finite", "became_nonfinite", "n_nonfinite_a", "n_nonfinite_b",
    "absmax_a", "absmax_b", "l2_a", "l2_b", "l2_diff", "dtype", "shape", "note", "n_new_nonfinite", "grew_from_zero",
]


def diff_checkpoints(a, b, *, workers: int | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> pd.DataFrame:
    """One row per tensor name of either checkpoint (columns DIFF_COLUMNS), largest change first (see
    `diff_table`, which also says which weight files could not be read)."""
    return diff_table(a, b, workers=workers, chunk_bytes=chunk_bytes).frame


def diff_table(a, b, *, workers: int | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> TensorTable:
    """`frame`: one row per tensor name of either checkpoint (columns DIFF_COLUMNS), largest change first.

    rel_change is ||b - a|| / ||a|| in float64 over the elements finite in both, except that it
    is inf when b holds a NaN/Inf where a was finite (n_new_nonfinite counts those; rel_change_finite
    keeps the finite part), and inf too when a tensor all zeros in a moved (grew_from_zero).
    became_nonfinite: a is all finite, b is not. A tensor in only one checkpoint gets a note
    and that side's counts. Files that cannot be read are in `skipped`; when
    either checkpoint has no readable file, UnreadableFile is raised.
    """
    ra, rb = as_ref(a), as_ref(b)
    workers = workers or os.cpu_count() or 1
    files_a, skipped_a = open_files(ra)
    files_b, skipped_b = open_files(rb)
    try:
        for files, skipped in ((files_a, skipped_a), (files_b, skipped_b)):
            if not files and skipped:
                raise UnreadableFile(skipped[0].path, skipped[0].reason)
        side_a = {e.name: (wf, e) for wf in files_a for e in wf.entries}
        side_b = {e.name: (wf, e) for wf in files_b for e in wf.entries}
        pairs = [n for n in side_a.keys() & side_b.keys() if _comparable(side_a[n][1], side_b[n][1])]
        sums, errors = _run_pairs(pairs, side_a, side_b, workers, chunk_bytes)
        scratch = Scratch(chunk_bytes)
        rows = [_row(n, side_a.get(n), side_b.get(n), sums.get(n), scratch)
                for n in sorted(side_a.keys() | side_b.keys(), key=block_sort_key)]
    finally:
        close_files(files_a + files_b)
    frame = pd.DataFrame(rows, columns=DIFF_COLUMNS)
    order = frame["rel_change"].fillna(-1.0)
    ordered = frame.assign(_o=order).sort_values(["_o", "n_nonfinite_b"], ascending=False, kind="stable") \
        .drop(columns="_o").reset_index(drop=True)
    return TensorTable(ordered, tuple(skipped_a + skipped_b + errors))


def require_one_model(changes: pd.DataFrame, a, b) -> None:
    """Raise BadOption where under half the rows of `diff_checkpoints` compared a tensor both sides hold (no `note`):
    checkpoints of different models share few tensor names, and comparing them tensor by tensor means nothing."""
    total = len(changes)
    shared = int(changes["note"].isna().sum()) if total else 0
    if total and shared < total / 2:
        raise BadOption(f"{a} and {b} share {shared} of {total} tensor names: they are not checkpoints of one "
                        "model, so a tensor-by-tensor diff would mean nothing")


def nonfinite_in_b(changes: pd.DataFrame) -> int:
    """The NaN/Inf values checkpoint B holds over the tensors `diff_checkpoints` compared (`diff` exits 1 on any)."""
    return int(changes["n_nonfinite_b"].fillna(0).sum()) if len(changes) else 0


def change_records(frame: pd.DataFrame) -> list[dict]:
    """The rows of a diff as JSON-ready dicts (`diff --json`, `bisect --json`'s changes). A number that is not
    finite is null, never the string "inf": a change through a new NaN/Inf (n_new_nonfinite), from a tensor of
    zeros (grew_from_zero), or a side with no finite value; those fields say which."""
    rows = frame.to_dict("records")
    return json_safe([{k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
                      for row in rows])


def _comparable(ea, eb) -> bool:
    return (ea.info is not None and eb.info is not None and ea.info.is_float and eb.info.is_float
            and ea.shape == eb.shape and ea.numel > 0)


@dataclass(frozen=True)
class PairUnit:
    """Element ranges of tensors that live in `file_a` on one side and `file_b` on the other."""

    file_a: str
    file_b: str
    pieces: tuple
    nbytes: int


@dataclass
class PairResult:
    sums: list = field(default_factory=list)  # [(tensor name, PairSums)]
    error: tuple[str, str] | None = None       # (file, reason)


def _run_pairs(names, side_a, side_b, workers: int, chunk_bytes: int):
    """PairSums per tensor name, and Skipped-like entries for files that failed mid-read."""
    groups: dict[tuple, list] = {}
    for name in sorted(names, key=lambda n: (side_a[n][1].file, side_a[n][1].offset)):
        groups.setdefault((side_a[name][0], side_b[name][0]), []).append(side_a[name][1])
    total = sum(e.nbytes for entries in groups.values() for e in entries)
    target = unit_target(total, workers)
    units, inline = [], []
    for (wa, wb), entries in groups.items():
        shareable = getattr(wa, "shareable", False) and getattr(wb, "shareable", False)
        for u in split_entries(str(wa.path), entries, target if shareable else total + 1, chunk_bytes):
            (units if shareable else inline).append(PairUnit(str(wa.path), str(wb.path), u.pieces, u.nbytes))
    if not worth_a_pool(workers, len(units), sum(u.nbytes for u in units)):
        inline, units = units + inline, []
    work = partial(compare_unit, chunk_bytes=chunk_bytes)
    results = map_in_pool(work, units, workers) if units else []
    opened = {str(wf.path): wf for wf, _ in list(side_a.values()) + list(side_b.values())}
    results += [compare_unit(u, chunk_bytes, opened.get(u.file_a), opened.get(u.file_b)) for u in inline]
    sums: dict[str, PairSums] = {}
    for result in results:
        for name, part in result.sums:
            sums.setdefault(name, PairSums()).merge(part)
    errors = [Skipped(*r.error) for r in results if r.error]
    return sums, errors


def compare_unit(unit: PairUnit, chunk_bytes: int, wf_a=None, wf_b=None) -> PairResult:
    """PairSums of every piece of `unit`; a read error ends up in `result.error`, never raised."""
    result = PairResult()
    own = [wf is None for wf in (wf_a, wf_b)]
    try:
        wf_a = wf_a or open_weight_file(unit.file_a)
        wf_b = wf_b or open_weight_file(unit.file_b)
        entries_a = {e.name: e for e in wf_a.entries}
        entries_b = {e.name: e for e in wf_b.entries}
        scratch_a, scratch_b = Scratch(chunk_bytes), Scratch(chunk_bytes)
        for piece in unit.pieces:
            ea, eb = entries_a[piece.name], entries_b[piece.name]
            sums = PairSums()
            # Each side's chunk length depends on its item size (F32 vs BF16): step both through the
            # same element ranges, each no longer than either side's chunk.
            per = min(chunk_elements(ea, scratch_a), chunk_elements(eb, scratch_b))
            for start in range(piece.start, piece.stop, per):
                stop = min(start + per, piece.stop)
                for bits_a, bits_b in zip(wf_a.chunks(ea, start, stop, scratch_a),
                                          wf_b.chunks(eb, start, stop, scratch_b)):
                    sums.add(ea.info, bits_a, scratch_a, eb.info, bits_b, scratch_b)
            result.sums.append((piece.name, sums))
    except UnreadableFile as err:
        result.error = (err.path, err.reason)
    finally:
        for wf, mine in zip((wf_a, wf_b), own):
            if mine and wf is not None:
                wf.close()
    return result


class PairSums:
    """Additive sums over chunk pairs: ||a||^2, ||b||^2 and ||b - a||^2 where both are finite, counts, absmax bits."""

    def __init__(self):
        self.numel = 0
        self.sq_a = self.sq_b = self.sq_a_both = self.sq_diff = 0.0
        self.n_bad_a = self.n_bad_b = self.n_new_bad = 0
        self.top_a = self.top_b = -1

    def merge(self, other: "PairSums") -> None:
        for key in ("numel", "sq_a", "sq_b", "sq_a_both", "sq_diff", "n_bad_a", "n_bad_b", "n_new_bad"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        self.top_a, self.top_b = max(self.top_a, other.top_a), max(self.top_b, other.top_b)

    def add(self, info_a, bits_a, scratch_a, info_b, bits_b, scratch_b) -> None:
        self.numel += bits_a.size
        bad_a, top_a = quick_chunk(info_a, bits_a)
        bad_b, top_b = quick_chunk(info_b, bits_b)
        if bad_a or bad_b:
            self._add_with_nonfinite(info_a, bits_a, scratch_a, info_b, bits_b, scratch_b)
            return
        self.top_a, self.top_b = max(self.top_a, top_a), max(self.top_b, top_b)
        # The same element order on both sides is all a difference needs.
        widen = WIDEN_FOR_SUMS if info_a.code == info_b.code else WIDEN
        va, vb = widen[info_a.code](bits_a, scratch_a), widen[info_b.code](bits_b, scratch_b)
        if not (f32_sums_safe(info_a, top_a) and f32_sums_safe(info_b, top_b)) or va.dtype != vb.dtype:
            va, vb = va.astype(np.float64), vb.astype(np.float64)
        sq = sum_of_squares(va)
        self.sq_a += sq
        self.sq_a_both += sq
        self.sq_b += sum_of_squares(vb)
        # Into scratch, never into vb: for F32/F64 vb may be the reader's own memory (a loaded tensor).
        self.sq_diff += sum_of_squares(np.subtract(vb, va, out=scratch_b.array("diff", vb.dtype, vb.size)))

    def _add_with_nonfinite(self, info_a, bits_a, scratch_a, info_b, bits_b, scratch_b) -> None:
        fin_a, top_a = _finite_mask(info_a, bits_a, scratch_a)
        fin_b, top_b = _finite_mask(info_b, bits_b, scratch_b)
        self.top_a, self.top_b = max(self.top_a, top_a), max(self.top_b, top_b)
        va = WIDEN[info_a.code](bits_a, scratch_a).astype(np.float64)
        vb = WIDEN[info_b.code](bits_b, scratch_b).astype(np.float64)
        self.n_bad_a += int(fin_a.size - np.count_nonzero(fin_a))
        self.n_bad_b += int(fin_b.size - np.count_nonzero(fin_b))
        self.n_new_bad += int(np.count_nonzero(~fin_b & fin_a))  # NaN/Inf in b where a was finite
        both = fin_a & fin_b
        self.sq_a += sum_of_squares(va[fin_a])
        self.sq_b += sum_of_squares(vb[fin_b])
        self.sq_a_both += sum_of_squares(va[both])
        self.sq_diff += sum_of_squares(vb[both] - va[both])

    def row(self, ea, eb) -> dict:
        diff = math.sqrt(self.sq_diff)
        base = math.sqrt(self.sq_a_both)
        finite_change = diff / base if base else (math.inf if diff else 0.0)
        return {
            "rel_change": math.inf if self.n_new_bad else finite_change,
            "rel_change_finite": finite_change,
            "n_new_nonfinite": self.n_new_bad, "grew_from_zero": not base and bool(diff),
            "became_nonfinite": self.n_bad_a == 0 and self.n_bad_b > 0,
            "n_nonfinite_a": self.n_bad_a, "n_nonfinite_b": self.n_bad_b,
            "absmax_a": magnitude_value(ea.info, self.top_a) if self.top_a >= 0 else math.nan,
            "absmax_b": magnitude_value(eb.info, self.top_b) if self.top_b >= 0 else math.nan,
            "l2_a": math.sqrt(self.sq_a), "l2_b": math.sqrt(self.sq_b), "l2_diff": diff,
        }


def _finite_mask(info, bits, scratch) -> tuple[np.ndarray, int]:
    """(mask of the finite elements, largest finite magnitude bits or -1)."""
    mag = np.bitwise_and(bits, info.mag_mask, out=scratch.array("mag", info.bits, bits.size))
    finite = mag < info.nonfinite_from
    return finite, int(mag[finite].max()) if finite.any() else -1


def _row(name: str, a, b, sums: PairSums | None, scratch: Scratch) -> dict:
    row = dict.fromkeys(DIFF_COLUMNS, math.nan)
    row.update(tensor=name, block=block_of(name), became_nonfinite=False, note=None, n_nonfinite_a=0, n_nonfinite_b=0,
               n_new_nonfinite=0, grew_from_zero=False)
    entry = (b or a)[1]
    row.update(dtype=entry.dtype, shape=entry.shape)
    if a is None or b is None:
        return _one_side(row, a or b, "a" if a else "b", scratch)
    ea, eb = a[1], b[1]
    if sums is not None and sums.numel == ea.numel:
        row.update(sums.row(ea, eb))
    elif ea.problem or eb.problem:
        row["note"] = ea.problem or eb.problem
    elif ea.shape != eb.shape:
        row["note"] = f"shape changed from {list(ea.shape)} to {list(eb.shape)}"
    elif ea.numel and not (ea.info.is_float and eb.info.is_float):
        row["note"] = "integer type: not compared"
    elif ea.numel:
        row["note"] = "not fully read (see skipped files)"
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
