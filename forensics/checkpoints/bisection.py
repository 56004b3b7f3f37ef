"""`bisect`: the last good and first bad checkpoint between two, what broke, what the logs say.

    >>> from pathlib import Path
    >>> import forensics
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> r = bisect(run / "checkpoint-20", run / "checkpoint-60", workers=1)
    >>> r.last_good.name, r.first_bad.name, r.first_bad.nonfinite_blocks
    ('checkpoint-20', 'checkpoint-40', ['model.layers.1'])
    >>> bisect_to_dict(r)["window"]
    {'from_step': 20, 'to_step': 40}

The checkpoints of the same run whose step lies between the two are the candidates. The
newest is probed first, then the oldest, then a binary search between them: O(log n) quick
checks, each stopping at the first bad tensor. A checkpoint that cannot be read is left out
of the search and shows as "unreadable" in `probed`. The last good and first bad are then
compared in full (diff_checkpoints), and the findings and metrics of the window between
their steps are attached.
"""
from __future__ import annotations

import math
from typing import Callable

import pandas as pd

from ..findings import json_safe
from .blocks import block_of, block_sort_key, blocks_in_order
from .criterion import parse_criterion
from .diff import DIFF_COLUMNS, diff_checkpoints
from .layout import siblings_between
from .scan import as_ref, quick_check
from .types import BisectResult, CheckpointInfo, CheckpointRef

Progress = Callable[[str], None]
WINDOW_METRICS = ("loss", "grad_norm", "learning_rate", "eval_loss")


def bisect(a, b, criterion=None, timeline=None, findings=None, progress: Progress | None = None, *,
           workers: int | None = None) -> BisectResult:
    """Find the last good and first bad checkpoint between `a` and `b` (folders, files or CheckpointRefs).

    Args:
        a, b: the two checkpoints; their order does not matter when both have steps.
        criterion: what else counts as bad (see criterion.parse_criterion), e.g. "absmax>1e4".
        timeline: the run's Timeline; its metrics inside the window go to `window_summary`.
        findings: analyze's findings; those whose step lies in (last_good.step, first_bad.step] are
            kept. When None and a timeline is given, the metric analyzers are run on it.
        progress: called with a short line per probe.
        workers: processes per quick check (default: os.cpu_count()).

    Returns a BisectResult; `bisect_to_dict` gives the `bisect --json` contract.
    """
    ra, rb = as_ref(a), as_ref(b)
    if ra.step is not None and rb.step is not None and ra.step > rb.step:
        ra, rb = rb, ra
    criterion = parse_criterion(criterion)
    candidates = [ra, *siblings_between(ra, rb), rb] if ra.path != rb.path else [ra]
    search = _Search(candidates, lambda ref: quick_check(ref, criterion, workers=workers), progress)
    last_good, first_bad = search.run()
    bad_info, changes = _compare(last_good, first_bad, search.infos.get(first_bad), ra, criterion, workers, progress)
    window = _window(last_good, first_bad, ra, rb)
    if findings is None and timeline is not None:
        findings = _timeline_findings(timeline)
    return BisectResult(last_good=last_good, first_bad=bad_info, probed=search.probed, window=window,
                        changes=changes, findings=_in_window(findings or [], window), candidates=candidates,
                        window_summary=window_summary(timeline, window) if timeline is not None else {},
                        criterion=criterion.describe())


class _Search:
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
            self.progress(f"probed {ref.name} (step {ref.step}): {verdict}")
        return verdict

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


def _compare(last_good, first_bad, probe: CheckpointInfo | None, ra, criterion, workers,
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
        return quick_check(first_bad, criterion, stop_at_first=False, workers=workers), empty
    if progress:
        progress(f"comparing {last_good.name} with {first_bad.name}")
    changes = diff_checkpoints(last_good, first_bad, workers=workers)
    found = set(changes.loc[changes["n_nonfinite_b"] > 0, "tensor"]) | set(probe.nonfinite_tensors if probe else ())
    bad = sorted(found, key=block_sort_key)
    status = "nonfinite" if bad else "bad"  # the probe said bad: if nothing is NaN/Inf, the criterion did
    info = CheckpointInfo(first_bad, status, nonfinite_tensors=bad, nonfinite_blocks=blocks_in_order(bad))
    if not bad:  # bad by the criterion only: name the tensors over the bound
        info.extra["over_bound_tensors"] = [t for t, m in zip(changes["tensor"], changes["absmax_b"])
                                            if criterion.is_bad(m)]
    return info, changes


def _timeline_findings(timeline) -> list:
    from ..analyzers import run_all
    from ..config import Thresholds
    return run_all(timeline, Thresholds())


def _window(last_good, first_bad, ra, rb) -> tuple[int | None, int | None]:
    if first_bad is None:
        return ra.step, rb.step
    return (last_good.step if last_good else None), first_bad.step


def _in_window(findings: list, window: tuple[int | None, int | None]) -> list:
    lo, hi = window
    return [f for f in findings if (lo is None or f.step > lo) and (hi is None or f.step <= hi)]


def window_summary(timeline, window: tuple[int | None, int | None]) -> dict:
    """Per metric inside (from_step, to_step]: points, first/last/max value and step, first NaN/Inf step."""
    lo, hi = window
    out = {}
    for metric in WINDOW_METRICS:
        series = timeline.series(metric)
        if lo is not None:
            series = series[series.index > lo]
        if hi is not None:
            series = series[series.index <= hi]
        if series.empty:
            continue
        finite = series[series.map(math.isfinite)]
        bad = series[~series.map(math.isfinite)]
        out[metric] = {
            "points": int(series.size),
            "first": float(series.iloc[0]), "last": float(series.iloc[-1]),
            "max": float(finite.max()) if finite.size else None,
            "max_step": int(finite.idxmax()) if finite.size else None,
            "first_nonfinite_step": int(bad.index[0]) if bad.size else None,
        }
    return out


def bisect_to_dict(result: BisectResult) -> dict:
    """The `bisect --json` contract (fields may be added, never renamed)."""
    first_bad = result.first_bad
    changes = result.changes if result.changes is not None else pd.DataFrame(columns=DIFF_COLUMNS)
    damaged: dict[str, list[str]] = {}
    if first_bad is not None:
        for t in first_bad.nonfinite_tensors:
            damaged.setdefault(_block_or_other(t), []).append(t)
    return json_safe({
        "last_good": result.last_good.to_dict() if result.last_good else None,
        "first_bad": None if first_bad is None else {
            **first_bad.ref.to_dict(), "status": first_bad.status,
            "nonfinite_tensors": list(first_bad.nonfinite_tensors),
            "nonfinite_blocks": list(first_bad.nonfinite_blocks), **_extra(first_bad)},
        "probed": [{**ref.to_dict(), "verdict": verdict} for ref, verdict in result.probed],
        "window": {"from_step": result.window[0], "to_step": result.window[1]},
        "findings": [f.to_dict() for f in result.findings],
        "changes": [_change(r) for r in changes.to_dict("records")],
        "damaged_blocks": [{"block": b, "tensors": t} for b, t in damaged.items()],
        "candidates": [ref.to_dict() for ref in result.candidates],
        "window_summary": result.window_summary,
        "criterion": result.criterion,
    })


def _block_or_other(tensor: str) -> str:
    return block_of(tensor) or "(outside blocks)"


def _extra(info: CheckpointInfo) -> dict:
    return {"over_bound_tensors": info.extra["over_bound_tensors"]} if "over_bound_tensors" in info.extra else {}


def _change(row: dict) -> dict:
    """A changes row for JSON: a value that does not apply (NaN) becomes null; json_safe does the rest."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
