"""The pure search of `bisect`: which checkpoint between two is the last good and which the first bad.

Knows checkpoints only (no findings, logs or reports): the use case that adds the run's logs and
findings, and the result type, are `forensics.bisection`.

The checkpoints of the same run whose step lies between the two are the candidates. The newest is
probed first, then the oldest, then a binary search between them: O(log n) quick checks, each
stopping at the first bad tensor. A checkpoint that cannot be read is left out of the search and
shows as "unreadable" in `probed`; `unread_candidates` also names those the search stepped over whose files do
not open. The last good and first bad are then compared in full (diff_checkpoints) to name every damaged tensor.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Callable

import pandas as pd

from .blocks import block_sort_key, blocks_in_order
from .diff import DIFF_COLUMNS, diff_checkpoints
from .layout import siblings_between
from .scan import close_files, open_files, quick_check
from .types import CheckpointInfo, CheckpointRef

Progress = Callable[[str], None]
Probe = Callable[[CheckpointRef], CheckpointInfo]


def candidates_between(ra: CheckpointRef, rb: CheckpointRef) -> list[CheckpointRef]:
    """`ra`, the checkpoints of the same run between the two (by step), and `rb`; `[ra]` when they are one."""
    return [ra, *siblings_between(ra, rb), rb] if ra.path != rb.path else [ra]


def search_window(last_good: CheckpointRef | None, first_bad: CheckpointRef | None,
                  ra: CheckpointRef, rb: CheckpointRef) -> tuple[int | None, int | None]:
    """The steps (last good, first bad] the damage happened in; the whole range when nothing is bad."""
    if first_bad is None:
        return ra.step, rb.step
    return (last_good.step if last_good else None), first_bad.step


class BinarySearch:
    """Binary search over `candidates` (by step) with a probe that says ok / bad / unreadable."""

    def __init__(self, candidates: list[CheckpointRef], check: Callable[[CheckpointRef], CheckpointInfo],
                 progress: Progress | None):
        self.candidates = list(candidates)
        self.check = check
        self.progress = progress
        self.probed: list[tuple[CheckpointRef, str]] = []
        self.infos: dict[CheckpointRef, CheckpointInfo] = {}

    def verdict(self, ref: CheckpointRef) -> str:
        info = self.infos[ref] = self.check(ref)
        verdict = {"ok": "ok", "nonfinite": "bad", "bad": "bad"}.get(info.status, "unreadable")
        self.probed.append((ref, verdict))
        if self.progress:
            self.progress(f"probe {len(self.probed)} of {self.most_probes()} at most: {ref.name} (step {ref.step}): "
                          f"{verdict}")
        return verdict

    def most_probes(self) -> int:
        """The most probes the search can take: the two ends, then one per halving of what lies between, and one
        more for each unreadable checkpoint met so far; never more than the candidates (none is probed twice)."""
        n = len(self.candidates)
        unreadable = sum(verdict == "unreadable" for _, verdict in self.probed)
        return min(n, 2 + math.ceil(math.log2(max(n - 1, 1))) + unreadable)

    def run(self) -> tuple[CheckpointRef | None, CheckpointRef | None]:
        """(last good, first bad); either is None when the search found none."""
        live = self.candidates
        hi = self._decisive(reversed(live))
        if hi is None or hi[1] == "ok":
            return (hi[0] if hi else None), None
        live = live[: live.index(hi[0]) + 1]
        lo = self._decisive(live[:-1])
        if lo is None or lo[1] == "bad":
            return None, (lo or hi)[0]
        live = live[live.index(lo[0]):]
        lo_i, hi_i = 0, len(live) - 1
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            verdict = self.verdict(live[mid])
            if verdict == "unreadable":
                del live[mid]
                hi_i -= 1
            elif verdict == "ok":
                lo_i = mid
            else:
                hi_i = mid
        return live[lo_i], live[hi_i]

    def _decisive(self, refs) -> tuple[CheckpointRef, str] | None:
        """Probe `refs` in order until one reads ok or bad."""
        for ref in refs:
            verdict = self.verdict(ref)
            if verdict != "unreadable":
                return ref, verdict
        return None


def unread_candidates(search: BinarySearch) -> list[tuple[CheckpointRef, str]]:
    """Every candidate that could not be read, by step, with why: those the search probed and left out, and those
    it never probed whose weight files do not open (headers only, no tensor read). A checkpoint the search stepped
    over may be where the damage began; the owner must know it was not read."""
    unread = []
    for ref in search.candidates:
        info = search.infos.get(ref)
        if info is not None:
            if (ref, "unreadable") in search.probed:
                unread.append((ref, info.reason or "unreadable"))
            continue
        files, skipped = open_files(ref)
        close_files(files)
        if skipped:
            unread.append((ref, "; ".join(f"{Path(s.path).name}: {s.reason}" for s in skipped)))
    return unread


def first_bad_in_full(last_good, first_bad, probe: CheckpointInfo | None, ra, criterion, workers,
             progress) -> tuple[CheckpointInfo | None, pd.DataFrame]:
    """(first bad with every damaged tensor named, changes last good -> first bad, largest first).

    The probe's verdict on the first bad checkpoint stands; the diff adds the damaged tensors it
    did not name (a quick check stops at the first), and the probe keeps those the diff cannot
    compare (a tensor whose shape changed).
    """
    empty = pd.DataFrame(columns=DIFF_COLUMNS)
    if first_bad is None:  # all good: what moved across the range
        if last_good is None or last_good.path == ra.path:
            return None, empty
        return None, diff_checkpoints(ra, last_good, workers=workers)
    if last_good is None:
        return _probe_judgement_kept(quick_check(first_bad, criterion, stop_at_first=False, workers=workers),
                                     probe), empty
    if progress:
        progress(f"comparing {last_good.name} with {first_bad.name}")
    changes = diff_checkpoints(last_good, first_bad, workers=workers)
    found = set(changes.loc[changes["n_nonfinite_b"] > 0, "tensor"]) | set(probe.nonfinite_tensors if probe else ())
    bad = sorted(found, key=block_sort_key)
    status = "nonfinite" if bad else "bad"  # the probe said bad: if nothing is NaN/Inf, the criterion did
    # bad by the criterion only: name the tensors over the bound
    over = None if bad else [t for t, m in zip(changes["tensor"], changes["absmax_b"]) if criterion.fails(m)]
    info = CheckpointInfo(first_bad, status, nonfinite_tensors=bad, nonfinite_blocks=blocks_in_order(bad),
                          over_bound_tensors=over)
    return _probe_judgement_kept(info, probe), changes


def _probe_judgement_kept(info: CheckpointInfo, probe: CheckpointInfo | None) -> CheckpointInfo:
    """`info` with the optimizer state the probe measured and, where the probe judged the checkpoint bad
    though its weights are finite (`reason`: NaN/Inf moments, saved after the incident), that verdict."""
    if probe is None:
        return info
    info = replace(info, optimizer=probe.optimizer, optimizer_problem=probe.optimizer_problem)
    if probe.status == "bad" and probe.reason and not info.nonfinite_tensors:
        info = replace(info, status="bad", reason=probe.reason)
    return info
