"""`forensics watch`: the analysis of `analyze`, live, on a job that is still running.

`Watcher(path).poll()` reads what the job wrote since the last poll (`ingest.tail`), runs the
same analyzers as `analyze` on the newest part of the timeline, and returns the findings not
reported before, each once, with the same words `analyze` uses. New checkpoints are checked once
their files have stopped changing (the same size and mtime on two polls in a row), never while
they are being written.

Why a window: re-analyzing the whole history at every poll would cost more as the run grows.
The analyzers look back a few dozen logged points, so the newest `window_rows` rows per file
are enough; a finding is reported only once it sits at least `margin_rows` rows inside the
window, where its baseline is complete (anything earlier was judged in an earlier poll).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pandas as pd

from .analyzers import SUMMARY_KINDS, run_all
from .analyzers.chain import link_weight_damage
from .config import Thresholds
from .errors import NotARunDirectory, UnreadableFile
from .findings import Finding, Skipped, sort_findings
from .ingest import reader_for
from .ingest.tail import APPENDED_KINDS, LogTail, TailReader, identity_of
from .discover.run import discover
from .discover.run_layout import RunLayout
from .timeline import Timeline, build_timeline

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
_FOLLOWED_KINDS = ("trainer_states",) + APPENDED_KINDS


@dataclass(frozen=True)
class CheckpointEvent:
    """A checkpoint that became complete and was checked during the watch."""

    name: str
    step: int | None
    status: str
    nonfinite_blocks: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"event": "checkpoint", "name": self.name, "step": self.step, "status": self.status,
                "nonfinite_blocks": list(self.nonfinite_blocks)}


@dataclass
class PollResult:
    """What one poll brought: findings reported for the first time, checkpoints checked, files skipped."""

    findings: list[Finding] = field(default_factory=list)
    checkpoints: list[CheckpointEvent] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    new_rows: bool = False


class Watcher:
    """Follows one run folder; each `poll()` returns what is new.

    >>> import json, tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> w = Watcher(run, check_checkpoints=False)
    >>> log = run / "trainer_log.jsonl"
    >>> _ = log.write_text("".join(json.dumps({"current_steps": s, "total_steps": 40, "loss": 2.0 - s / 100}) + "\\n"
    ...                            for s in (10, 20)))
    >>> [f.kind for f in w.poll().findings]
    []
    >>> with log.open("a") as fh:
    ...     _ = fh.write(json.dumps({"current_steps": 30, "total_steps": 40, "loss": float("nan")}) + "\\n")
    >>> [(f.kind, f.step) for f in w.poll().findings]
    [('nonfinite_metric', 30)]
    >>> w.poll().findings
    []
    """

    def __init__(self, path, thresholds: Thresholds | None = None, check_checkpoints: bool = True,
                 window_rows: int = 20_000, margin_rows: int = 200, workers: int | None = 1):
        self.root = Path(path)
        if not self.root.is_dir():
            raise NotARunDirectory(self.root, "no such folder to watch")
        self.thresholds = thresholds or Thresholds()
        self.check_checkpoints = check_checkpoints
        self.window_rows, self.margin_rows, self.workers = window_rows, margin_rows, workers
        self._tails: dict[tuple[int, int], LogTail] = {}
        self._reader = TailReader({kind: reader_for(kind) for kind in _FOLLOWED_KINDS})
        self._reported: list[Finding] = []
        self._ckpt_signatures: dict[Path, tuple] = {}
        self._checked: dict[Path, object] = {}
        self._failed: dict[Path, tuple | None] = {}
        self.polls = 0

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> "Watcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def reported(self) -> list[Finding]:
        """Every finding reported so far, in the order reported."""
        return list(self._reported)

    def poll(self) -> PollResult:
        """Read what is new, analyze, and return the findings and checkpoints not reported before."""
        self.polls += 1
        result = PollResult()
        layout = discover(self.root)
        result.skipped += layout.skipped
        result.new_rows = self._read_logs(layout, result.skipped)
        events = self._check_new_checkpoints(layout, result.skipped) if self.check_checkpoints else []
        result.checkpoints = events
        if result.new_rows or events:
            result.findings = self._new_findings(self._analyze())
            self._reported += result.findings
        return result

    # --- logs ---------------------------------------------------------------------------------

    def _read_logs(self, layout, skipped: list[Skipped]) -> bool:
        new = False
        for kind in _FOLLOWED_KINDS:
            for path in getattr(layout, kind):
                tail = self._tail_for(path, kind)
                if tail is None:
                    continue
                try:
                    new |= self._reader.poll(tail)
                except UnreadableFile as err:
                    # A file caught mid-write reads as cut; only one that stays bad without changing is skipped.
                    signature = _file_signature(path)
                    if self._failed.get(path) == signature:
                        skipped.append(Skipped(err.path, err.reason))
                    self._failed[path] = signature
        return new

    def _tail_for(self, path: Path, kind: str) -> LogTail | None:
        identity = identity_of(path)
        if identity is None:
            return None
        tail = self._tails.get(identity)
        if tail is None:
            if kind == "trainer_states":  # rewritten by rename at each save: the new file supersedes the old
                self._tails = {k: t for k, t in self._tails.items() if t.path != path}
            tail = self._tails[identity] = LogTail(path=path, kind=kind, identity=identity)
        tail.path = path  # a rotated log keeps its inode under a new name
        return tail

    # --- checkpoints --------------------------------------------------------------------------

    def _check_new_checkpoints(self, layout, skipped: list[Skipped]) -> list[CheckpointEvent]:
        from .checkpoints import check_run_checkpoints, find_checkpoints

        events = []
        for ref in find_checkpoints(layout):
            if ref.path in self._checked or not self._settled(ref):
                continue
            sub = RunLayout(root=layout.root, weight_files=[*ref.files, *ref.aux_files])
            infos, problems = check_run_checkpoints(sub, self.thresholds, workers=self.workers)
            skipped += problems
            for info in infos:
                self._checked[ref.path] = info
                events.append(CheckpointEvent(ref.name, info.step, info.status, tuple(info.nonfinite_blocks)))
        return events

    def _settled(self, ref) -> bool:
        """True when the checkpoint's files are unchanged since the last poll (so not being written)."""
        signature = tuple(sorted(_file_signature(p) for p in ref.files))
        settled = self._ckpt_signatures.get(ref.path) == signature and None not in signature
        self._ckpt_signatures[ref.path] = signature
        return settled

    # --- analysis -----------------------------------------------------------------------------

    def timeline(self) -> Timeline:
        """The timeline of the newest window (the whole run while it is shorter than the window)."""
        return self._window()[0]

    def _window(self) -> tuple[Timeline, int | None]:
        """The newest window's timeline, and the step before which findings were judged in earlier polls."""
        records, cut = [], None
        for tail in self._tails.values():
            rec, truncated = tail.records(self.window_rows)
            if rec is None:
                continue
            records.append(rec)
            if truncated and len(rec.frame) > self.margin_rows:
                edge = int(rec.frame["step"].iloc[self.margin_rows])
                cut = edge if cut is None else max(cut, edge)
        return build_timeline(records), cut

    def _analyze(self) -> tuple[list[Finding], int | None]:
        """Findings of the newest window, and the step before which findings were judged earlier."""
        from .analyzers.weights import weight_findings

        timeline, cut = self._window()
        findings = run_all(timeline, self.thresholds) if len(timeline) else []
        checked = sorted(self._checked.values(), key=lambda c: (c.step is None, c.step or 0))
        findings += weight_findings(checked, timeline, self.thresholds)
        return sort_findings(link_weight_damage(findings)), cut

    def _new_findings(self, analyzed: tuple[list[Finding], int | None]) -> list[Finding]:
        findings, cut = analyzed
        fresh = []
        for f in findings:
            if f.kind in SUMMARY_KINDS:
                continue  # a judgement of the whole log ("no evidence it learned"), not an event to report live
            if cut is not None and f.step < cut:
                continue  # at the window's edge its baseline is cut short; it was judged in earlier polls
            if not any(same_event(f, r) for r in self._reported + fresh):
                fresh.append(f)
        return fresh


def same_event(a: Finding, b: Finding) -> bool:
    """The same kind on the same metric over overlapping steps: one event seen again, maybe grown."""
    if a.kind != b.kind or a.metric != b.metric:
        return False
    a_end = a.end_step if a.end_step is not None else a.step
    b_end = b.end_step if b.end_step is not None else b.step
    return a.step <= b_end and b.step <= a_end


def _file_signature(path: Path):
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_size, stat.st_mtime_ns)


def watch(path, interval: float = 5.0, max_polls: int | None = None, sleep: Callable[[float], None] | None = None,
          **options) -> Iterator[PollResult]:
    """Poll the run at `path` every `interval` seconds, yielding each PollResult (forever, or `max_polls` times)."""
    import time

    sleep = sleep or time.sleep
    with Watcher(path, **options) as watcher:
        while max_polls is None or watcher.polls < max_polls:
            yield watcher.poll()
            if max_polls is None or watcher.polls < max_polls:
                sleep(interval)


def at_least(finding: Finding, severity: str) -> bool:
    """True when the finding is of `severity` or worse."""
    return SEVERITY_RANK[finding.severity] >= SEVERITY_RANK[severity]


def findings_frame(findings: list[Finding]) -> pd.DataFrame:
    """The reported findings as a DataFrame (kind, severity, step, metric, message)."""
    cols = ["kind", "severity", "step", "metric", "message"]
    return pd.DataFrame([{c: getattr(f, c) for c in cols} for f in findings], columns=cols)
