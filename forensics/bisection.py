"""`bisect`, a use case of its own: the last good and first bad checkpoint between two, what broke,
and what the run's logs say about the window between them.

    >>> from pathlib import Path
    >>> import forensics
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> r = bisect_checkpoints(run / "checkpoint-20", run / "checkpoint-60", workers=1)
    >>> r.last_good.name, r.first_bad.name, r.first_bad.nonfinite_blocks
    ('checkpoint-20', 'checkpoint-40', ['model.layers.1'])
    >>> r.to_dict()["window"]
    {'from_step': 20, 'to_step': 40}

The search over the ordered checkpoints lives in `checkpoints.bisection` and knows nothing of
findings; this module adds the findings and metrics of the window. `BisectResult` is data: the
report renders it (`report.html`), it does not render itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import pandas as pd

from .analyzers import run_all
from .analyzers.weights import first_harm, why_not_safe
from .checkpoints.bisection import (BinarySearch, candidates_between, first_bad_in_full, search_window,
                                    unread_candidates)
from .checkpoints.blocks import block_of
from .checkpoints.criterion import parse_criterion
from .checkpoints.diff import DIFF_COLUMNS, change_records
from .checkpoints.layout import checkpoint_of, same_run_folder
from .checkpoints.run_checks import check_with_optimizer
from .checkpoints.scan import as_ref
from .checkpoints.types import CheckpointInfo, CheckpointRef
from .config import Thresholds
from .errors import UnreadableFile
from .findings import Finding, json_safe, plural, sort_findings
from .ingest import read_logs
from .discover.run import discover
from .timeline import Timeline, build_timeline

Progress = Callable[[str], None]
WINDOW_METRICS = ("loss", "grad_norm", "learning_rate", "eval_loss")


@dataclass(frozen=True)
class BisectResult:
    """What `bisect` found between two checkpoints; `to_dict()` is the `bisect --json` contract.

    Fields:
        last_good: the newest checkpoint that reads ok before the first bad one, or None.
        first_bad: the first bad checkpoint with every damaged tensor and block, or None.
        probed: (checkpoint, "ok" | "bad" | "unreadable") in probe order.
        window: the steps (last good, first bad]; the whole range when nothing is bad.
        changes: tensor, block, rel_change, ... from last good to first bad, largest first.
        findings: analyze's findings inside the window.
        candidates: every checkpoint the search could probe, by step.
        window_summary: metric -> points, first/last/max, first NaN/Inf step inside the window.
        criterion: what counted as bad besides NaN/Inf.
        incident: the first finding of the run's log that harms the weights (analyze's rule); a finite
            checkpoint saved from its step on is bad, its `reason` says so. None without one.
        reasons: checkpoint path -> why a probed one was unreadable or, finite, still bad.
        unread: (checkpoint, why) for every candidate that could not be read, probed or stepped over, by step.
    """

    last_good: CheckpointRef | None
    first_bad: CheckpointInfo | None
    probed: list[tuple[CheckpointRef, str]]
    window: tuple[int | None, int | None]
    changes: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    candidates: list[CheckpointRef] = field(default_factory=list)
    window_summary: dict = field(default_factory=dict)
    criterion: str = "non-finite only"
    incident: Finding | None = None
    reasons: dict = field(default_factory=dict)
    unread: list[tuple[CheckpointRef, str]] = field(default_factory=list)

    def unread_in_window(self) -> list[CheckpointRef]:
        """The checkpoints that could not be read between the last good and the first bad: the damage may have
        begun at one of them, so the window is only as narrow as they allow."""
        if self.first_bad is None:
            return []
        lo = self.last_good.step if self.last_good is not None else None
        hi = self.first_bad.ref.step
        return [ref for ref, _ in self.unread if ref.step is not None and hi is not None and ref.step < hi
                and (lo is None or ref.step > lo)]

    def to_dict(self) -> dict:
        """The `bisect --json` contract (fields may be added, never renamed)."""
        first_bad = self.first_bad
        changes = self.changes if self.changes is not None else pd.DataFrame(columns=DIFF_COLUMNS)
        return json_safe({
            "last_good": self.last_good.to_dict() if self.last_good else None,
            "first_bad": None if first_bad is None else _first_bad_dict(first_bad),
            "probed": [{**ref.to_dict(), "verdict": verdict, "reason": self.reasons.get(ref.path)}
                       for ref, verdict in self.probed],
            "window": {"from_step": self.window[0], "to_step": self.window[1]},
            "findings": [f.to_dict() for f in self.findings],
            "changes": change_records(changes),
            "damaged_blocks": _damaged_blocks(first_bad),
            "candidates": [ref.to_dict() for ref in self.candidates],
            "window_summary": self.window_summary,
            "criterion": self.criterion,
            "incident": None if self.incident is None else {"kind": self.incident.kind, "step": self.incident.step},
            "unread": [{**ref.to_dict(), "reason": reason} for ref, reason in self.unread],
            "unread_in_window": [ref.name for ref in self.unread_in_window()],
        })

    def __str__(self) -> str:
        """One line: the verdict, not the data (print `to_dict()` or the report for that)."""
        probes = f"{plural(len(self.probed), 'probe')} over {plural(len(self.candidates), 'checkpoint')}"
        if self.unread:
            probes += f", {len(self.unread)} not read: {', '.join(ref.name for ref, _ in self.unread)}"
        if self.first_bad is None:
            good = f"; newest good {self.last_good.name}" if self.last_good else ""
            return f"bisect: no bad checkpoint{good} ({probes})"
        blocks = self.first_bad.nonfinite_blocks
        where = f" in {', '.join(blocks[:3])}{' ...' if len(blocks) > 3 else ''}" if blocks else ""
        if not blocks and self.first_bad.reason:
            where = f": {self.first_bad.reason}"
        good = f"{self.last_good.name} (step {self.last_good.step})" if self.last_good else "none"
        return (f"bisect: last good {good}, first bad {self.first_bad.name} (step {self.first_bad.step}){where}; "
                f"{plural(len(self.findings), 'finding')} in the window ({probes})")

    def _repr_html_(self) -> str:
        """A notebook view, rendered by the report (`report.html`, autoescaped) like `bisect --html`."""
        from .report.html import bisect_fragment_html  # jinja2 and matplotlib: only when shown

        return bisect_fragment_html(self)


def bisect_to_dict(result: BisectResult) -> dict:
    """The `bisect --json` contract; the same as `result.to_dict()`."""
    return result.to_dict()


def bisect(a, b, criterion: str | None = None, progress: Progress | None = None) -> BisectResult:
    """Find the last good and first bad checkpoint between checkpoints `a` and `b`.

    `a` and `b` are checkpoint folders or weight files of one run; the checkpoints between them are
    probed by a binary search. The run's logs (found next to the checkpoints) are read too, so the
    result lists what the metrics did inside the window. `criterion` ("absmax>1e4") also counts
    finite but huge weights as bad.

    Returns a BisectResult: `last_good` (CheckpointRef), `first_bad` (CheckpointInfo with every
    damaged tensor and block), `window` (steps), `changes` (DataFrame, last good -> first bad, largest
    first), `findings` and `window_summary` of the window, `probed`. `result.to_dict()` is the
    `bisect --json` contract.

    >>> import forensics
    >>> run = Path(forensics.__file__).parents[1] / "sample_runs" / "nan_masked"
    >>> r = bisect(run / "checkpoint-20", run / "checkpoint-60")
    >>> r.last_good.name, r.first_bad.name, r.window
    ('checkpoint-20', 'checkpoint-40', (20, 40))
    >>> [f.kind for f in r.findings], r.window_summary["grad_norm"]["first_nonfinite_step"]
    (['masked_nan_loss', 'nonfinite_metric'], 35)
    """
    ref_a, ref_b = checkpoint_of(a), checkpoint_of(b)
    same_run_folder(ref_a, ref_b)
    timeline = _timeline_near(ref_a.path, ref_b.path)
    findings = sort_findings(run_all(timeline, Thresholds())) if len(timeline) else []
    return bisect_checkpoints(ref_a, ref_b, criterion=parse_criterion(criterion), timeline=timeline,
                              findings=findings, progress=progress)


def bisect_checkpoints(a, b, criterion=None, timeline: Timeline | None = None, findings: list | None = None,
                       progress: Progress | None = None, *, workers: int | None = None) -> BisectResult:
    """Bisect between `a` and `b` (folders, files or CheckpointRefs) with a timeline and findings you give.

    Args:
        a, b: the two checkpoints; their order does not matter when both have steps.
        criterion: what else counts as bad (see checkpoints.criterion.parse_criterion), e.g. "absmax>1e4".
        timeline: the run's Timeline; its metrics inside the window go to `window_summary`.
        findings: analyze's findings; those whose step lies in (last_good.step, first_bad.step] are
            kept. When None and a timeline is given, the metric analyzers are run on it.
        progress: called with a short line per probe.
        workers: processes per quick check (default: os.cpu_count()).
    """
    ra, rb = as_ref(a), as_ref(b)
    if ra.step is not None and rb.step is not None and ra.step > rb.step:
        ra, rb = rb, ra
    criterion = parse_criterion(criterion)
    if findings is None and timeline is not None:
        findings = run_all(timeline, Thresholds())
    findings = findings or []
    candidates = candidates_between(ra, rb)
    search = BinarySearch(candidates, lambda ref: _judged(check_with_optimizer(ref, criterion, workers), findings),
                          progress)
    last_good, first_bad = search.run()
    _endpoints_readable(search, (ra, rb))
    bad_info, changes = first_bad_in_full(last_good, first_bad, search.infos.get(first_bad), ra, criterion,
                                          workers, progress)
    window = search_window(last_good, first_bad, ra, rb)
    return BisectResult(last_good=last_good, first_bad=bad_info, probed=search.probed, window=window,
                        changes=changes, findings=_in_window(findings, window), candidates=candidates,
                        window_summary=window_summary(timeline, window) if timeline is not None else {},
                        criterion=criterion.describe(), incident=first_harm(findings),
                        reasons=_probe_reasons(search.infos), unread=unread_candidates(search))


def _endpoints_readable(search: BinarySearch, endpoints: tuple[CheckpointRef, CheckpointRef]) -> None:
    """Raise UnreadableFile for an endpoint the search probed and could not read: a bisect whose end is unknown
    ("first bad: none" beside a cut checkpoint) answers nothing, so it is a usage error naming the checkpoint."""
    for ref in endpoints:
        info = search.infos.get(ref)
        if info is not None and (ref, "unreadable") in search.probed:
            raise UnreadableFile(ref.path, f"cannot bisect to a checkpoint that cannot be read: {info.reason}")


def _probe_reasons(infos: dict) -> dict:
    """Checkpoint path -> why it was unreadable or bad, or what of it could not be checked (its optimizer state)."""
    reasons = {ref.path: info.reason or (f"optimizer state not checked: {info.optimizer_problem}"
                                         if info.optimizer_problem else None) for ref, info in infos.items()}
    return {path: reason for path, reason in reasons.items() if reason}


def _judged(info: CheckpointInfo, findings: list) -> CheckpointInfo:
    """The probe's verdict by analyze's rule for the last good checkpoint: finite weights are not enough when
    the optimizer state is NaN/Inf or the checkpoint was saved after the incident that harmed the weights."""
    reason = why_not_safe(info, findings)
    return replace(info, status="bad", reason=reason) if reason else info


def _timeline_near(*paths: Path) -> Timeline:
    """The timeline of the run folder that holds these checkpoints (empty when it has no logs)."""
    parents = [Path(p).resolve().parent if Path(p).resolve().is_dir() else Path(p).resolve().parent.parent
               for p in paths]
    root = parents[0] if all(p == parents[0] for p in parents) else None
    if root is None:
        return Timeline.empty()
    layout = discover(root)
    layout.weight_files = []
    records, _ = read_logs(layout)
    return build_timeline(records)


def _in_window(findings: list, window: tuple[int | None, int | None]) -> list:
    lo, hi = window
    return [f for f in findings if (lo is None or f.step > lo) and (hi is None or f.step <= hi)]


def window_summary(timeline: Timeline, window: tuple[int | None, int | None]) -> dict:
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


def _first_bad_dict(info: CheckpointInfo) -> dict:
    over = {"over_bound_tensors": list(info.over_bound_tensors)} if info.over_bound_tensors is not None else {}
    return {**info.ref.to_dict(), "status": info.status, "nonfinite_tensors": list(info.nonfinite_tensors),
            "nonfinite_blocks": list(info.nonfinite_blocks), **over, "reason": info.reason,
            "optimizer_finite": info.optimizer_finite}


def _damaged_blocks(first_bad: CheckpointInfo | None) -> list[dict]:
    """The first bad checkpoint's non-finite tensors grouped by block (outside any: "(outside blocks)")."""
    damaged: dict[str, list[str]] = {}
    for tensor in first_bad.nonfinite_tensors if first_bad is not None else ():
        damaged.setdefault(block_of(tensor) or "(outside blocks)", []).append(tensor)
    return [{"block": b, "tensors": t} for b, t in damaged.items()]

