"""The unified timeline: every logged scalar of a run in one long DataFrame.

Ingestors return `LogRecords` (one per file); `build_timeline` merges them:

* metric names are mapped to one vocabulary (`train/loss`, `loss` -> `loss`; `eval/loss`,
  `eval_loss` -> `eval_loss`; `lr`, `learning_rate` -> `learning_rate`);
* where the logs overlap, `log_attempts` says which rows stand: a later attempt of the same kind of log
  supersedes an earlier one from its first step on (the replaced rows kept, marked `abandoned`: an incident
  there happened in a thrown-away attempt), and the same point seen in several files is kept once, from the
  most precise source.

NaN and Inf are data: never dropped, never filled.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .metric_names import canonical_metric  # noqa: F401  (the readers' one name map, re-exported)
from .tracker_run import TrackerRun, distinct_runs  # noqa: F401  (re-exported: the readers build them)
from .findings import plural
from .log_attempts import (LAUNCH, LAUNCHED_ATTEMPTS, attempt_numbers, drop_duplicate_points, file_reach,
                           mark_superseded, one_per_step_metric, start_key)

COLUMNS = ["step", "metric", "value", "source", "format", "wall_time", "segment", "abandoned"]

def empty_frame() -> pd.DataFrame:
    """The frame an ingestor returns when a file holds no scalar."""
    return pd.DataFrame({
        "step": pd.Series(dtype="int64"),
        "metric": pd.Series(dtype="object"),
        "value": pd.Series(dtype="float64"),
        "wall_time": pd.Series(dtype="float64"),
    })


@dataclass(frozen=True)
class Banner:
    """What a console log says about the run itself in a banner line, for the run profile.

    kind: "peft" (PEFT's print_trainable_parameters: `trainable params: X || all params: Y ||
    trainable%: Z`) or "unsloth" (Unsloth's `==((====))==` block: its model-loading banner or its
    training banner, which states `Number of trainable parameters = X`) or "webui"
    (text-generation-webui's LoRA training, which trains adapters only) or "adapter_counts" (a script's own
    `LoRA model initialized. Trainable parameters: X, All parameters: Y`), among others (ingest/banners.py).
    text: the banner as printed (one line, or the block's lines joined by newlines): the evidence.
    trainable_params, all_params: the counts it states, None where it states none.
    source: the log file.
    launch: which of the launches appended to that file printed it (`launch 3 of 4`), "" where it holds one.
    """

    kind: str
    text: str
    trainable_params: int | None = None
    all_params: int | None = None
    source: str = ""
    launch: str = ""

    @property
    def where(self) -> str:
        """The file, with the launch that printed the banner where the file holds several: for the evidence."""
        return f"{self.source} ({self.launch})" if self.launch else self.source


@dataclass(frozen=True)
class LogRecords:
    """What an ingestor read from one file.

    Fields:
        source: the file's path.
        format: "trainer_state", "tensorboard", "llamafactory", "swift", "jsonl", "stdout", ...
        frame: columns step (int64), metric (canonical name), value (float64), wall_time
            (float64 seconds since the epoch, NaN where the file has none), in file order.
        texts: free texts the file holds (TensorBoard `args` and `model_config` summaries).
        meta: format facts worth keeping (logging_steps, max_steps, global_step, ...).
        mtime: the file's modification time, to order files that carry no wall time.
        warnings: why the file was read only in part (cut, bad checksum, lines without a step), if it was.
        console_kinds: the pre-training console formats a text log holds ("megatron", "olmo",
            "torchtitan"), in the order first seen; a hint of the framework for the run profile.
        notes: what the reader did to the file's records that a reader of the report must know
            (a log written by two processes, de-duplicated); each becomes one Skipped-style line.
        banners: the Unsloth / PEFT banners a console log printed (see Banner), in file order.
        tracker_run: the W&B / MLflow run the records belong to (see TrackerRun), None for other logs.
    """

    source: str
    format: str
    frame: pd.DataFrame
    texts: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    mtime: float = math.nan
    warnings: tuple[str, ...] = ()
    console_kinds: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    banners: tuple[Banner, ...] = ()
    tracker_run: TrackerRun | None = None


@dataclass(frozen=True)
class Segment:
    """One attempt in one file: the steps it logged, and whether a resume threw part of it away."""

    id: int
    source: str
    format: str
    first_step: int
    last_step: int
    n_points: int
    abandoned: bool
    abandoned_from_step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "first_step": self.first_step,
            "last_step": self.last_step,
            "n_points": self.n_points,
            "abandoned": self.abandoned,
            "abandoned_from_step": self.abandoned_from_step,
        }


class Timeline:
    """A run's scalars as a long DataFrame (`frame`, columns COLUMNS) plus its segments.

    >>> t = Timeline.empty()
    >>> t.wide().shape
    (0, 0)
    """

    def __init__(self, frame: pd.DataFrame, segments: list[Segment], texts: dict[str, str] | None = None,
                 meta: dict[str, dict] | None = None):
        self.frame = frame
        self.segments = segments
        self.texts = texts or {}
        self.meta = meta or {}
        self._final: tuple[pd.DataFrame, pd.DataFrame] | None = None
        self.skipped: list = []  # files that could not be read (Skipped), set by whoever read the run
        self.banners: tuple[Banner, ...] = ()  # every log's banners (LogRecords.banners), in file order
        self.console_kinds: tuple[str, ...] = ()  # pre-training console formats seen (LogRecords.console_kinds)
        self.tracker_runs: tuple[TrackerRun, ...] = ()  # the W&B / MLflow runs read (LogRecords.tracker_run)

    @classmethod
    def empty(cls) -> "Timeline":
        frame = empty_frame().assign(source=pd.Series(dtype="object"), format=pd.Series(dtype="object"),
                                     segment=pd.Series(dtype="int64"), abandoned=pd.Series(dtype="bool"))
        return cls(frame[COLUMNS], [])

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (f"<Timeline {plural(len(self.frame), 'point')}, {plural(len(self.metrics), 'metric')}, "
                f"{plural(len(self.segments), 'segment')}>")

    def _repr_html_(self) -> str:
        """A notebook view: counts, then per metric its points, step range, non-finite count and last value.

        Metric names come from the run's files, so every cell is HTML-escaped.
        """
        n_abandoned = sum(s.abandoned for s in self.segments)
        head = (f"<p><strong>Timeline</strong>: {len(self.frame)} points, {len(self.metrics)} metrics, "
                f"{plural(len(self.segments), 'segment')} ({n_abandoned} with abandoned steps). "
                "<code>.wide()</code> is step x metric, <code>.frame</code> the long table.</p>")
        rows = self.final()
        if rows.empty:
            return head
        rows = rows.sort_values("step", kind="stable")
        rows = rows.assign(nonfinite=~np.isfinite(rows["value"].to_numpy(dtype="float64")))
        per = rows.groupby("metric").agg(points=("value", "size"), first_step=("step", "min"),
                                         last_step=("step", "max"), nonfinite=("nonfinite", "sum"))
        per["first_nonfinite_step"] = rows[rows["nonfinite"]].groupby("metric")["step"].min()
        per["first_nonfinite_step"] = per["first_nonfinite_step"].astype("Int64")
        # Formatted as text so a NaN last value reads "nan" rather than the blank of a missing cell.
        last = rows.drop_duplicates("metric", keep="last").set_index("metric")["value"]
        per["last_value"] = last.map("{:.6g}".format)
        return head + per.to_html(escape=True, na_rep="")

    @property
    def metrics(self) -> list[str]:
        return sorted(self.frame["metric"].unique().tolist())

    def final(self) -> pd.DataFrame:
        """The history that stands: abandoned rows left out, one row per (step, metric), most precise source.

        Returns a long DataFrame with the columns of `frame` (step, metric, value, source, format,
        wall_time, segment, abandoned), sorted by step.

        >>> frame = pd.DataFrame({"step": [10, 20, 20], "metric": ["loss", "loss", "grad_norm"],
        ...                       "value": [2.5, 0.0, float("nan")], "wall_time": float("nan")})
        >>> t = build_timeline([LogRecords("trainer_state.json", "trainer_state", frame)])
        >>> t.final()[["step", "metric", "value"]].values.tolist()
        [[10, 'loss', 2.5], [20, 'grad_norm', nan], [20, 'loss', 0.0]]
        """
        # Every detector asks for it: compute once per frame object (treat the result as read-only).
        if self._final is None or self._final[0] is not self.frame:
            rows = self.frame[~self.frame["abandoned"]]
            self._final = (self.frame, one_per_step_metric(rows))
        return self._final[1]

    def abandoned(self) -> pd.DataFrame:
        """The rows that a later attempt replaced, one per (segment, step, metric)."""
        rows = self.frame[self.frame["abandoned"]]
        return rows.drop_duplicates(["segment", "step", "metric"], keep="last")

    def wide(self, include_abandoned: bool = False) -> pd.DataFrame:
        """Step x metric DataFrame of the final history (NaN/Inf kept; a gap is NaN too).

        Indexed by step, one column per metric; slice a window with `.loc[first:last]`. With
        include_abandoned=True the abandoned attempts come along, indexed by (segment, step).

        >>> frame = pd.DataFrame({"step": [10, 20, 20], "metric": ["loss", "loss", "grad_norm"],
        ...                       "value": [2.5, 0.0, float("nan")], "wall_time": float("nan")})
        >>> t = build_timeline([LogRecords("trainer_state.json", "trainer_state", frame)])
        >>> t.wide()  # doctest: +NORMALIZE_WHITESPACE
              grad_norm  loss
        step
        10          NaN   2.5
        20          NaN   0.0
        """
        if include_abandoned:
            rows = self.frame.drop_duplicates(["segment", "step", "metric"], keep="last")
            return rows.pivot(index=["segment", "step"], columns="metric", values="value").sort_index()
        rows = self.final()
        if rows.empty:
            return pd.DataFrame()
        wide = rows.pivot(index="step", columns="metric", values="value").sort_index()
        wide.columns.name = None
        return wide

    def series(self, metric: str, include_abandoned: bool = False) -> pd.Series:
        """One metric of the final history as a float Series indexed by step (empty if never logged).

        >>> frame = pd.DataFrame({"step": [10, 20, 20], "metric": ["loss", "loss", "grad_norm"],
        ...                       "value": [2.5, 0.0, float("nan")], "wall_time": float("nan")})
        >>> t = build_timeline([LogRecords("trainer_state.json", "trainer_state", frame)])
        >>> t.series("loss").to_dict()
        {10: 2.5, 20: 0.0}
        """
        rows = self.final() if not include_abandoned else self.frame
        rows = rows[rows["metric"] == metric]
        return pd.Series(rows["value"].to_numpy(), index=rows["step"].to_numpy(), name=metric, dtype="float64")

    def to_csv(self, path) -> None:
        """Write the long frame (every row, abandoned ones marked) as CSV; NaN/Inf as `nan`/`inf`."""
        self.frame.to_csv(path, index=False, na_rep="nan")


def build_timeline(records: list[LogRecords]) -> Timeline:
    """Merge what the ingestors read into one Timeline (see the module docstring)."""
    pieces, seg_rows = [], []
    for rec in records:
        if rec.frame.empty:
            continue
        frame = rec.frame.reset_index(drop=True)
        # A step below the one before it starts a new attempt (a resume or a new session);
        # eval and summary entries repeat their train step, so equal steps do not count.
        attempt = attempt_numbers(frame)
        reach = file_reach(frame, rec.meta.get(LAUNCHED_ATTEMPTS, ()))
        for a in np.unique(attempt):
            part = frame[attempt == a]
            seg_id = len(seg_rows)
            seg_rows.append({
                "id": seg_id, "source": rec.source, "format": rec.format,
                "first_step": int(part["step"].iloc[0]), "last_step": int(part["step"].max()),
                "launch_marked": LAUNCH in frame.columns,
                "start": start_key(part, rec.mtime, rec.meta.get("global_step", reach(part, int(a))), int(a)),
            })
            pieces.append(part.assign(source=rec.source, format=rec.format, segment=seg_id))
    if not pieces:
        timeline = Timeline.empty()
        timeline.texts, timeline.meta = _texts_and_meta(records)
        _set_console_facts(timeline, records)
        return timeline
    frame = pd.concat(pieces, ignore_index=True)
    abandoned = mark_superseded(frame, seg_rows)
    frame["abandoned"] = abandoned
    frame = drop_duplicate_points(frame)
    frame["step"] = frame["step"].astype("int64")
    segments = _segments(frame, seg_rows)
    # the run's own texts (its arguments, its model's config) before an abandoned attempt's: a runs/ folder keeps the
    # TensorBoard file of every attempt, each with the arguments and model it was started with
    final = set(frame.loc[~frame["abandoned"], "source"])
    texts, meta = _texts_and_meta(sorted(records, key=lambda rec: rec.source not in final))
    timeline = Timeline(frame[COLUMNS].reset_index(drop=True), segments, texts, meta)
    _set_console_facts(timeline, records)
    return timeline


def _set_console_facts(timeline: Timeline, records: list[LogRecords]) -> None:
    """What the console logs said about the run itself, for the run profile; the tracker runs read."""
    timeline.banners = tuple(b for rec in records for b in rec.banners)
    timeline.console_kinds = tuple(dict.fromkeys(k for rec in records for k in rec.console_kinds))
    timeline.tracker_runs = tuple(distinct_runs(rec.tracker_run for rec in records if rec.tracker_run is not None))


def _segments(frame: pd.DataFrame, seg_rows: list[dict]) -> list[Segment]:
    """The segments that still hold rows after de-duplication, with their abandoned part."""
    out = []
    grouped = frame.groupby("segment", sort=True)
    for seg_id, rows in grouped:
        info = seg_rows[int(seg_id)]
        dropped = rows.loc[rows["abandoned"], "step"]
        out.append(Segment(
            id=int(seg_id), source=info["source"], format=info["format"],
            first_step=info["first_step"], last_step=info["last_step"], n_points=len(rows),
            abandoned=bool(len(dropped)), abandoned_from_step=int(dropped.min()) if len(dropped) else None,
        ))
    return out


def _texts_and_meta(records: list[LogRecords]) -> tuple[dict[str, str], dict[str, dict]]:
    texts: dict[str, str] = {}
    meta: dict[str, dict] = {}
    for rec in records:
        for key, text in rec.texts.items():
            texts.setdefault(key, text)
        if rec.meta:
            meta[rec.source] = rec.meta
    return texts, meta


_STEP_IN_NAME = re.compile(r"(?:checkpoint|ckpt|global_step|step|iter)[-_]?(\d+)$", re.IGNORECASE)


def step_from_name(name: str) -> int | None:
    """The step number in a checkpoint folder or file name, or None.

    >>> [step_from_name(n) for n in ("checkpoint-3600", "ckpt_12", "global_step500", "final")]
    [3600, 12, 500, None]
    """
    stem = re.sub(r"\.(safetensors|bin|pt|pth)$", "", name)
    m = _STEP_IN_NAME.search(stem)
    return int(m.group(1)) if m else None
