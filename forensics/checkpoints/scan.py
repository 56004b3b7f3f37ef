"""Check one checkpoint: `quick_check` (is anything NaN/Inf?) and `scan_checkpoint` (stats per tensor).

    >>> from pathlib import Path
    >>> import forensics
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> from forensics.checkpoints import quick_check, scan_checkpoint
    >>> info = quick_check(run / "checkpoint-40", stop_at_first=False, workers=1)
    >>> info.status, info.nonfinite_blocks
    ('nonfinite', ['model.layers.1'])
    >>> stats = scan_checkpoint(run / "checkpoint-40", workers=1)
    >>> int((stats["n_nan"] + stats["n_inf"] > 0).sum()) == len(info.nonfinite_tensors)
    True

Both read the weight files in bounded chunks (units.py, stats.py), across processes when
the checkpoint is large enough to pay for them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import NoCheckpoints, UnreadableFile, os_reason
from ..lfs import unreadable_reason
from ..findings import Skipped
from .blocks import block_sort_key, blocks_in_order
from .criterion import parse_criterion
from .layout import open_checkpoint
from .entries import WeightFile
from .optimizer_file import OptimizerFile
from .optimizer_stats import optimizer_names, split_state
from .readers import open_weight_file
from .stats import Partial, needs_shifted_pass, stats_row
from .types import STATS_COLUMNS, CheckpointInfo, CheckpointRef, TensorTable
from .units import DEFAULT_CHUNK_BYTES, Job, Piece, Unit, plan_units, run_units
from .zero_copies import copy_disagreements

Progress = Callable[[str], None]
SCAN_COLUMNS = STATS_COLUMNS + ["note"]
NOT_FULLY_READ = "not fully read (see skipped files)"  # the note of a row whose data could not all be read


def as_ref(path_or_ref) -> CheckpointRef:
    """A CheckpointRef as given, or the checkpoint at a path (open_checkpoint)."""
    return path_or_ref if isinstance(path_or_ref, CheckpointRef) else open_checkpoint(path_or_ref)


def quick_check(ref, criterion=None, *, stop_at_first: bool = True, workers: int | None = None,
                chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: Progress | None = None) -> CheckpointInfo:
    """Is the checkpoint finite? Reads float tensors with two integer maxima per chunk.

    Args:
        ref: a CheckpointRef or a path (folder or file).
        criterion: what else makes it bad (a Criterion, "absmax>1e4", a bound, or None).
        stop_at_first: stop at the first bad tensor (bisect); False lists every non-finite tensor.
        workers: processes to use (default: os.cpu_count()); 1 reads inline.
        chunk_bytes: bytes read per chunk.
        progress: called with a short line per part read.

    Returns a CheckpointInfo with status "ok", "nonfinite", "bad" (finite, but fails `criterion`),
    "unreadable" (reason says which file and why) or "empty" (no tensors: e.g. the 40-byte
    adapter of a ZeRO-3 save). `full_scan` stays False; `stopped_early` says whether
    tensors were left unread.
    """
    ref = as_ref(ref)
    criterion = parse_criterion(criterion)
    workers = workers or os.cpu_count() or 1
    files, skipped = open_files(ref)
    try:
        empty = _empty_reason(ref, files)
        if empty and not skipped:
            return CheckpointInfo(ref, "empty", reason=empty, criterion=criterion.describe())
        job = Job("quick", chunk_bytes, criterion, stop_at_first)
        results = run_units(plan_units(files, workers, chunk_bytes, floats_only=True), job,
                            {str(wf.path): wf for wf in files}, workers, progress, ref.name)
        nonfinite = sorted({n for r in results for n in r.nonfinite}, key=block_sort_key)
        over = sorted({n for r in results for n in r.over_bound}, key=block_sort_key)
        skipped += [Skipped(r.file, r.error) for r in results if r.error]
        unchecked = [e.name for wf in files for e in wf.entries if e.problem]
        names = {e.name for wf in files for e in wf.entries}
    finally:
        close_files(files)
    by_file: dict[str, list[str]] = {}
    for r in results:
        by_file.setdefault(r.file, []).extend(r.nonfinite)
    by_file = {f: sorted(set(n), key=block_sort_key) for f, n in sorted(by_file.items()) if n}
    return CheckpointInfo(ref, _status(nonfinite, over, skipped), nonfinite_tensors=nonfinite,
                          nonfinite_blocks=blocks_in_order(nonfinite), reason=_reason(skipped),
                          nonfinite_files=by_file, copy_disagreements=copy_disagreements(by_file, names),
                          criterion=criterion.describe(), stopped_early=bool(stop_at_first and (nonfinite or over)),
                          over_bound_tensors=over or None, unchecked_tensors=unchecked, unreadable_files=tuple(skipped))


def _status(nonfinite, over, skipped) -> str:
    if nonfinite:
        return "nonfinite"
    if over:
        return "bad"
    return "unreadable" if skipped else "ok"


def _reason(skipped: list[Skipped]) -> str | None:
    return "; ".join(f"{Path(s.path).name}: {s.reason}" for s in skipped) or None


def scan_checkpoint(path_or_ref, workers: int | None = None, progress: Progress | None = None, *,
                    chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> pd.DataFrame:
    """Stats of every tensor: one row each, columns STATS_COLUMNS plus `note` (see `scan_table`,
    which also says which weight files could not be read)."""
    return scan_table(path_or_ref, workers, progress, chunk_bytes=chunk_bytes).frame


def scan_table(path_or_ref, workers: int | None = None, progress: Progress | None = None, *,
               chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> TensorTable:
    """Stats of every tensor: `frame` has one row each, columns STATS_COLUMNS plus `note`.

    n_nan/n_inf count non-finite elements; absmax, l2, mean and std (population, ddof=0) are
    of the finite values, accumulated in float64; zero_frac counts +-0.0; fp16_headroom is
    65504 / absmax (below 1: the tensor overflows in fp16). Integer and bool tensors get
    counts and absmax only. Rows are in file order. Files that cannot be read are listed in
    `skipped` (Skipped entries); when none can be read, UnreadableFile is raised.

    Args:
        path_or_ref: a checkpoint folder, weight file or CheckpointRef.
        workers: processes to use (default: os.cpu_count()); 1 reads inline.
        progress: called with a short line per part read.
        chunk_bytes: bytes read per chunk (memory per worker is a few times this).
    """
    ref = as_ref(path_or_ref)
    workers = workers or os.cpu_count() or 1
    files, skipped = open_files(ref)
    if not files:
        if skipped:
            raise UnreadableFile(skipped[0].path, skipped[0].reason)
        raise NoCheckpoints(ref.path, "no weight files to scan")
    try:
        results = run_units(plan_units(files, workers, chunk_bytes), Job("full", chunk_bytes),
                            {str(wf.path): wf for wf in files}, workers, progress, ref.name)
        skipped += [Skipped(r.file, r.error) for r in results if r.error]
        parts = _merge(results)
        shift, shifted = _shifted_pass(files, parts, chunk_bytes)
        rows = [_row(e, parts.get((e.file, e.name)), shifted, shift) for wf in files for e in wf.entries]
        optimizer = next((wf for wf in files if isinstance(wf, OptimizerFile)), None)
        mapping = optimizer_names(optimizer) if optimizer is not None else None
    finally:
        close_files(files)
    frame = pd.DataFrame(rows, columns=SCAN_COLUMNS)
    # An optimizer state: rows per moment, named by parameter (state: exp_avg / exp_avg_sq).
    return TensorTable(split_state(frame, mapping) if mapping is not None else frame, tuple(skipped))


def _row(entry, part: Partial | None, shifted: dict, shift: dict) -> dict:
    key = (entry.file, entry.name)
    if entry.info is not None and entry.numel and (part is None or part.numel != entry.numel):
        row = stats_row(entry, None)
        row["note"] = NOT_FULLY_READ
        return row
    return stats_row(entry, part, shifted.get(key), shift.get(key, 0.0))


def _merge(results) -> dict[tuple[str, str], Partial]:
    parts: dict[tuple[str, str], Partial] = {}
    for result in results:
        for name, part in result.partials:
            parts.setdefault((result.file, name), Partial()).merge(part)
    return parts


def _shifted_pass(files: list[WeightFile], parts: dict, chunk_bytes: int) -> tuple[dict, dict]:
    """Second float64 pass around the mean for tensors whose mean dominates their spread (norm weights)."""
    shift: dict[tuple[str, str], float] = {}
    units = []
    for wf in files:
        pieces = []
        for e in wf.entries:
            part = parts.get((e.file, e.name))
            if part is not None and part.numel == e.numel and needs_shifted_pass(e, part):
                shift[(e.file, e.name)] = part.s1 / part.n_finite
                pieces.append(Piece(e.name, 0, e.numel, shift[(e.file, e.name)]))
        if pieces:
            units.append(Unit(str(wf.path), tuple(pieces), 0, inline=True))
    if not units:
        return shift, {}
    results = run_units(units, Job("shifted", chunk_bytes), {str(wf.path): wf for wf in files}, workers=1)
    return shift, _merge(results)


def open_files(ref: CheckpointRef) -> tuple[list[WeightFile], list[Skipped]]:
    """The weight files of `ref` that open, and a Skipped entry for each that does not."""
    files, skipped = [], []
    for path in ref.files:
        try:
            files.append(open_weight_file(path))
        except UnreadableFile as err:
            skipped.append(Skipped(err.path, unreadable_reason(err)))
        except OSError as err:
            skipped.append(Skipped(str(path), os_reason(err)))
    return files, skipped


def close_files(files: list[WeightFile]) -> None:
    for wf in files:
        wf.close()


def _empty_reason(ref: CheckpointRef, files: list[WeightFile]) -> str | None:
    """Why a checkpoint holds no weights to check, or None when it holds some."""
    entries = [e for wf in files for e in wf.entries]
    if not files or any(e.numel for e in entries):
        return None
    names = ", ".join(Path(wf.path).name for wf in files)
    if entries:
        what = f"all {len(entries)} tensors of {names} are empty (ZeRO-3 placeholders: the weights are partitioned)"
    else:
        what = f"{names} holds no tensors"
    if any(Path(wf.path).name.startswith("adapter_model") for wf in files):
        what += ("; an adapter saved this way comes from a DeepSpeed ZeRO-3 run without "
                 "stage3_gather_16bit_weights_on_model_save: the weights are only in the global_step*/ partitions")
    return what
