"""Split a checkpoint's tensors into work units and run them, inline or across processes.

A unit is a run of tensor pieces (element ranges) of one file, 16 to 128 MB, about eight per
worker, so shards and even single large files spread over all workers; the sums of a tensor
split over several units merge exactly (stats.Partial). safetensors units go to a process pool
(fork on Linux: no re-import); torch files are read in the calling process, which already
holds them memory-mapped. A quick check with `stop_at_first` stops every worker once one
finds a bad tensor.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from ..errors import UnreadableFile
from .criterion import Criterion
from .dtypes import Scratch, magnitude_value
from .entries import WeightFile
from .fanout import active_client, map_on_dask
from .readers import open_weight_file
from .stats import Partial, full_chunk, quick_chunk, shifted_chunk

# Raw bytes per chunk: a chunk and its float32 widening stay in cache, and numpy's per-call
# overhead stays small (measured on BF16: 1-4 MiB fastest, 256 KiB ~12% slower).
DEFAULT_CHUNK_BYTES = 2 << 20
MIN_UNIT_BYTES = 16 << 20
MAX_UNIT_BYTES = 128 << 20  # small enough that the last units keep every worker busy
PARALLEL_FROM_BYTES = 64 << 20  # below this a process pool costs more than it saves

_STOP = None  # in a worker: the Event that tells it another worker already found a bad tensor


@dataclass(frozen=True)
class Piece:
    """Elements [start, stop) of tensor `name`; `shift` is used by the shifted (second) pass only."""

    name: str
    start: int
    stop: int
    shift: float = 0.0


@dataclass(frozen=True)
class Unit:
    file: str
    pieces: tuple[Piece, ...]
    nbytes: int
    inline: bool = False


@dataclass(frozen=True)
class Job:
    """What to do with each piece: mode "full", "shifted" or "quick"."""

    mode: str
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    criterion: Criterion = Criterion()
    stop_at_first: bool = False


@dataclass
class UnitResult:
    file: str
    partials: list[tuple[str, Partial]] = field(default_factory=list)
    nonfinite: list[str] = field(default_factory=list)
    over_bound: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def found_bad(self) -> bool:
        return bool(self.nonfinite or self.over_bound)


def plan_units(files: list[WeightFile], workers: int, chunk_bytes: int, floats_only: bool = False) -> list[Unit]:
    """Units of `unit_target` bytes over every file; torch files make one unit each, read inline."""
    entries = [(wf, e) for wf in files for e in wf.entries
               if e.info is not None and e.numel and (e.info.is_float or not floats_only)]
    target = unit_target(sum(e.nbytes for _, e in entries), workers)
    units: list[Unit] = []
    for wf in files:
        mine = [e for f, e in entries if f is wf]
        if not getattr(wf, "shareable", False):  # torch files: one unit, read in this process
            units.append(Unit(str(wf.path), tuple(Piece(e.name, 0, e.numel) for e in mine),
                              sum(e.nbytes for e in mine), inline=True))
            continue
        units.extend(split_entries(str(wf.path), mine, target, chunk_bytes))
    return units


def unit_target(total_bytes: int, workers: int) -> int:
    """Bytes per unit: about 8 units per worker, within [MIN_UNIT_BYTES, MAX_UNIT_BYTES]."""
    return min(max(total_bytes // max(1, 8 * workers), MIN_UNIT_BYTES), MAX_UNIT_BYTES)


def split_entries(path: str, entries, target: int, chunk_bytes: int) -> list[Unit]:
    """Units of about `target` bytes over `entries` (in order), splitting large tensors into pieces."""
    units, pieces, size = [], [], 0
    for e in entries:
        start = 0
        while start < e.numel:
            n = max(target - size, chunk_bytes) // e.info.itemsize
            n -= n % 256 if n >= 512 else 0
            stop = min(e.numel, start + max(n, 1))
            pieces.append(Piece(e.name, start, stop))
            size += (stop - start) * e.info.itemsize
            start = stop
            if size >= target:
                units.append(Unit(path, tuple(pieces), size))
                pieces, size = [], 0
    if pieces:
        units.append(Unit(path, tuple(pieces), size))
    return units


def run_units(units: list[Unit], job: Job, open_files: dict[str, WeightFile], workers: int,
              progress: Callable[[str], None] | None = None, label: str = "") -> list[UnitResult]:
    """Run every unit; results in completion order. `open_files` are reused for inline units."""
    pooled = [u for u in units if not u.inline]
    inline = [u for u in units if u.inline]
    if not worth_a_pool(workers, len(pooled), sum(u.nbytes for u in pooled)):
        inline, pooled = units, []
    results: list[UnitResult] = []
    report = _reporter(progress, label, len(units))
    if pooled:
        stop_if = (lambda r: r.found_bad) if job.stop_at_first else None
        results += map_in_pool(partial(run_unit, job=job), pooled, workers, report, stop_if)
    for unit in inline:
        if job.stop_at_first and any(r.found_bad for r in results):
            break
        results.append(run_unit(unit, job, open_files.get(unit.file)))
        report(results[-1])
    return results


def worth_a_pool(workers: int, n_tasks: int, nbytes: int) -> bool:
    if active_client() is not None:  # a Dask cluster was asked for: every shareable unit goes there
        return n_tasks > 0
    return workers > 1 and n_tasks > 1 and nbytes >= PARALLEL_FROM_BYTES


def _reporter(progress, label: str, total: int) -> Callable[[UnitResult], None]:
    done = [0]

    def report(result: UnitResult) -> None:
        done[0] += 1
        if progress:
            progress(f"{label}: part {done[0]} of {total} read ({os.path.basename(result.file)})")
    return report


def map_in_pool(fn: Callable, tasks: list, workers: int, on_result: Callable | None = None,
                stop_if: Callable | None = None) -> list:
    """fn(task) for every task in a pool of up to `workers` processes (or on the Dask cluster of an
    enclosing `fanout.dask_scheduler` block); results in task order, so sums merge the same way
    whichever worker finished first.

    When `stop_if(result)` is true, the workers still running are told to stop (see _STOP) and
    the tasks not yet started are dropped.
    """
    client = active_client()
    if client is not None:
        return map_on_dask(client, fn, tasks, on_result, stop_if)
    ctx = _mp_context()
    stop = ctx.Event()
    results = []
    with warnings.catch_warnings():
        # Python >= 3.12 warns about fork() in a process with threads (BLAS); the workers use none.
        warnings.simplefilter("ignore", DeprecationWarning)
        with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=ctx, initializer=_init_worker,
                                 initargs=(stop,)) as pool:
            futures = [pool.submit(fn, task) for task in tasks]
            order = {f: i for i, f in enumerate(futures)}
            for future in as_completed(futures):
                if future.cancelled():  # dropped after stop_if
                    continue
                results.append((order[future], future.result()))
                if on_result:
                    on_result(results[-1][1])
                if stop_if is not None and stop_if(results[-1][1]):
                    stop.set()
                    for f in futures:
                        f.cancel()
    return [result for _, result in sorted(results, key=lambda pair: pair[0])]


def _mp_context():
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _init_worker(stop) -> None:
    global _STOP
    _STOP = stop


def run_unit(unit: Unit, job: Job, wf: WeightFile | None = None) -> UnitResult:
    """Do `job` on every piece of `unit`; read errors end up in `result.error`, never raised."""
    result = UnitResult(unit.file)
    own = wf is None
    try:
        if own:
            wf = open_weight_file(unit.file)
        entries = {e.name: e for e in wf.entries}
        scratch = Scratch(job.chunk_bytes)
        for piece in unit.pieces:
            if _STOP is not None and _STOP.is_set():
                break
            entry = entries[piece.name]
            if job.mode == "quick":
                _quick_piece(wf, entry, piece, scratch, job, result)
                if job.stop_at_first and result.found_bad:
                    break
            else:
                result.partials.append((piece.name, _sums_piece(wf, entry, piece, scratch, job.mode)))
    except UnreadableFile as err:
        result.error = err.reason
    finally:
        if own and wf is not None:
            wf.close()
    return result


def _sums_piece(wf, entry, piece: Piece, scratch: Scratch, mode: str) -> Partial:
    part = Partial()
    for bits in wf.chunks(entry, piece.start, piece.stop, scratch):
        if mode == "shifted":
            shifted_chunk(entry.info, bits, scratch, piece.shift, part)
        else:
            full_chunk(entry.info, bits, scratch, part)
    return part


def _quick_piece(wf, entry, piece: Piece, scratch: Scratch, job: Job, result: UnitResult) -> None:
    top = 0
    n_chunks = 0
    for bits in wf.chunks(entry, piece.start, piece.stop, scratch):
        bad, chunk_top = quick_chunk(entry.info, bits)
        if bad:
            result.nonfinite.append(entry.name)
            return
        top = max(top, chunk_top)
        n_chunks += 1
        if n_chunks % 16 == 0 and _STOP is not None and _STOP.is_set():
            return
    if job.criterion.absmax_above is not None and job.criterion.fails(magnitude_value(entry.info, top)):
        result.over_bound.append(entry.name)

