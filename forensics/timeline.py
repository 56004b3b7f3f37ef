"""The unified timeline: every logged scalar of a run in one long DataFrame.

Ingestors return `LogRecords` (one per file); `build_timeline` merges them:

* metric names are mapped to one vocabulary (`train/loss`, `loss` -> `loss`; `eval/loss`,
  `eval_loss` -> `eval_loss`; `lr`, `learning_rate` -> `learning_rate`);
* a file whose step goes backwards holds several attempts; a later attempt of the same kind
  of log supersedes the earlier one from its first step on, and the rows it replaced are kept
  but marked `abandoned` (an incident there happened in a thrown-away attempt);
* the same point seen in several files (trainer_state.json and its float32 copy in
  TensorBoard, the copy of log_history in every checkpoint) is kept once, from the most
  precise source.

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

COLUMNS = ["step", "metric", "value", "source", "format", "wall_time", "segment", "abandoned"]

# Lower is more precise: trainer_state.json keeps full float64, TensorBoard float32.
FORMAT_PRIORITY = {
    "trainer_state": 0,
    "swift": 1,
    "llamafactory": 1,
    "jsonl": 2,
    "stdout": 3,
    "deepspeed": 3,
    "tensorboard": 4,
    "wandb": 2,  # value_json: the float as logged
    "mlflow": 2,  # the float as logged (the SQL store's NaN/Inf encoding is undone by its reader)
    "wandb_summary": 5,  # only a run's last values
}

# mtimes closer than this are treated as equal (a fresh git clone or a copy gives every
# file nearly the same mtime, so it cannot tell which checkpoint was written last).
MTIME_RESOLUTION_S = 2.0

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
    """

    kind: str
    text: str
    trainable_params: int | None = None
    all_params: int | None = None
    source: str = ""


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
            self._final = (self.frame, _one_per_step_metric(rows))
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


def _one_per_step_metric(rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return rows
    # Codes of the few distinct formats and metrics, not a per-row map (seconds at millions of rows).
    format_codes, formats = pd.factorize(rows["format"])
    prio = np.array([FORMAT_PRIORITY.get(f, 9) for f in formats], dtype="int64")[format_codes]
    metric_codes, _ = pd.factorize(rows["metric"], sort=True)
    # a NaN/Inf one log shows at a step is never hidden by a finite value another log holds for it (a second
    # log of the same run written after the fact, or another run's log beside it): the damage is what is kept.
    # Within one log the first row stands: an empty cell of its own (an epoch table's eval-only last row) is no damage
    finite = np.isfinite(rows["value"].to_numpy(dtype="float64"))
    finite_first = np.ones(len(rows), dtype=bool)
    shared = rows.duplicated(["step", "metric"], keep=False).to_numpy()
    if shared.any():  # (the group count only over the few rows two lines share: millions of rows stay fast)
        logs_at = rows[shared].groupby(["step", "metric"], sort=False)["source"].transform("nunique").to_numpy()
        finite_first[shared] = np.where(logs_at > 1, finite[shared], True)
    order = np.lexsort((prio, finite_first, metric_codes, rows["step"].to_numpy()))
    rows = rows.iloc[order]
    return rows.drop_duplicates(["step", "metric"], keep="first")


def build_timeline(records: list[LogRecords]) -> Timeline:
    """Merge what the ingestors read into one Timeline (see the module docstring)."""
    pieces, seg_rows = [], []
    for rec in records:
        if rec.frame.empty:
            continue
        frame = rec.frame.reset_index(drop=True)
        # A step below the one before it starts a new attempt (a resume or a new session);
        # eval and summary entries repeat their train step, so equal steps do not count.
        attempt = _attempts(frame)
        for a in np.unique(attempt):
            part = frame[attempt == a]
            seg_id = len(seg_rows)
            seg_rows.append({
                "id": seg_id, "source": rec.source, "format": rec.format,
                "first_step": int(part["step"].iloc[0]), "last_step": int(part["step"].max()),
                "start": _start_key(part, rec, int(a)),
            })
            pieces.append(part.assign(source=rec.source, format=rec.format, segment=seg_id))
    if not pieces:
        timeline = Timeline.empty()
        timeline.texts, timeline.meta = _texts_and_meta(records)
        _set_console_facts(timeline, records)
        return timeline
    frame = pd.concat(pieces, ignore_index=True)
    abandoned = _mark_superseded(frame, seg_rows)
    frame["abandoned"] = abandoned
    frame = _drop_duplicate_points(frame)
    frame["step"] = frame["step"].astype("int64")
    segments = _segments(frame, seg_rows)
    # the run's own texts (its arguments, its model's config) before an abandoned attempt's: a runs/ folder keeps the
    # TensorBoard file of every attempt, each with the arguments and model it was started with
    final = set(frame.loc[~frame["abandoned"], "source"])
    texts, meta = _texts_and_meta(sorted(records, key=lambda rec: rec.source not in final))
    timeline = Timeline(frame[COLUMNS].reset_index(drop=True), segments, texts, meta)
    _set_console_facts(timeline, records)
    return timeline


# Counters an engine prints on its own lines with its own exact step (DeepSpeed's `step=N, skipped=K`), beside log
# lines whose steps may be estimates (HF dicts numbered by position): where the two orders disagree, it is not a resume.
_ENGINE_COUNTERS = ("skipped_steps",)


def _attempts(frame: pd.DataFrame) -> np.ndarray:
    """The attempt number of each row: a step below the one before it starts a new attempt (a resume or a new
    session). Engine counter rows (`_ENGINE_COUNTERS`) do not start one: they belong to the attempt of the row before
    them (of the one after, at the file's start), and the order is read from the other rows alone."""
    steps = frame["step"].to_numpy()
    counter = frame["metric"].isin(_ENGINE_COUNTERS).to_numpy()
    if not counter.any() or counter.all():
        return np.concatenate([[0], np.cumsum(np.diff(steps) < 0)])
    others = np.flatnonzero(~counter)
    of_others = np.concatenate([[0], np.cumsum(np.diff(steps[others]) < 0)])
    attempt = np.full(len(steps), -1, dtype="int64")
    attempt[others] = of_others
    before = np.maximum.accumulate(np.where(attempt >= 0, np.arange(len(steps)), -1))
    return np.where(before >= 0, attempt[np.maximum(before, 0)], of_others[0])


def _set_console_facts(timeline: Timeline, records: list[LogRecords]) -> None:
    """What the console logs said about the run itself, for the run profile; the tracker runs read."""
    timeline.banners = tuple(b for rec in records for b in rec.banners)
    timeline.console_kinds = tuple(dict.fromkeys(k for rec in records for k in rec.console_kinds))
    timeline.tracker_runs = tuple(distinct_runs(rec.tracker_run for rec in records if rec.tracker_run is not None))


def _start_key(part: pd.DataFrame, rec: LogRecords, attempt: int) -> tuple:
    """Sort key for 'which attempt came later' within one kind of log.

    TensorBoard rows carry wall times: the attempt's first one says when it started. Files
    without wall times are ordered by mtime (when clearly apart), then by how far they got.
    """
    wall = part["wall_time"].to_numpy(dtype="float64")
    wall = wall[np.isfinite(wall)]
    if wall.size:
        return (float(wall.min()), 0, attempt)
    mtime = rec.mtime if math.isfinite(rec.mtime) else 0.0
    bucket = math.floor(mtime / MTIME_RESOLUTION_S)
    global_step = rec.meta.get("global_step")
    reached = global_step if type(global_step) is int else int(part["step"].max())  # null/str in odd files
    return (float(bucket), reached, attempt)


def _mark_superseded(frame: pd.DataFrame, seg_rows: list[dict]) -> np.ndarray:
    """Rows of an earlier attempt at or past a later attempt's first step (same kind of log) are abandoned."""
    # cut[segment]: the lowest first step of any newer attempt of the same kind of log (inf: none).
    cut = np.full(len(seg_rows), np.inf)
    by_format: dict[str, list[dict]] = {}
    for s in seg_rows:
        by_format.setdefault(s["format"], []).append(s)
    copies = _copied_segments(frame, by_format)
    logged = _metrics_by_segment(frame, by_format)
    for segs in by_format.values():
        newer: list[dict] = []
        for s in sorted(segs, key=lambda s: s["start"], reverse=True):
            # a later attempt logs what this one logged; a file of other metrics (a validation log beside the
            # training one, fairseq2's valid.jsonl) is not one
            cut[s["id"]] = min((t["first_step"] for t in newer if logged[t["id"]] & logged[s["id"]]), default=math.inf)
            if s["id"] not in copies:
                newer.append(s)
    return frame["step"].to_numpy() >= cut[frame["segment"].to_numpy()]


def _metrics_by_segment(frame: pd.DataFrame, by_format: dict[str, list[dict]]) -> dict[int, set]:
    """The metric names each segment logs (only where its kind of log has more than one segment)."""
    ids = {s["id"] for segs in by_format.values() if len(segs) > 1 for s in segs}
    if not ids:
        return {s["id"]: set() for segs in by_format.values() for s in segs}
    rows = frame.loc[frame["segment"].isin(ids), ["segment", "metric"]].drop_duplicates()
    named = rows.groupby("segment")["metric"].agg(set).to_dict()
    return {s["id"]: named.get(s["id"], set()) for segs in by_format.values() for s in segs}


def as_float32(values) -> np.ndarray:
    """Values as float32, what a logger's float32 metric printed at full precision rounds back to; a value past
    float32's range (1e300 in a hand-written log) becomes inf quietly, as it would have been logged."""
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype="float64").astype("float32")


def _copied_segments(frame: pd.DataFrame, by_format: dict[str, list[dict]]) -> set[int]:
    """Segments every point of which another segment of the same kind of log also holds, and that ends no later:
    a checkpoint's trainer_state.json holds the history up to its save, a copy, not a later attempt, whatever
    its file's mtime says (a copied folder's mtimes say nothing)."""
    groups = [segs for segs in by_format.values() if len(segs) > 1]
    if not groups:
        return set()
    keys = pd.util.hash_pandas_object(frame[["step", "metric"]].assign(
        value=as_float32(frame["value"])), index=False).to_numpy()
    segment = frame["segment"].to_numpy()
    points = {s["id"]: np.unique(keys[segment == s["id"]]) for segs in groups for s in segs}
    return {s["id"] for segs in groups for s in segs
            if any(t is not s and t["last_step"] >= s["last_step"] and len(points[t["id"]]) > len(points[s["id"]])
                   and np.isin(points[s["id"]], points[t["id"]], assume_unique=True).all() for t in segs)}


def _drop_duplicate_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one row per (step, metric, float32 value): standing rows first, then the most precise source."""
    v32 = as_float32(frame["value"])
    # Map the few distinct formats, not every row (a per-row .map is most of the time at 1M rows).
    codes, formats = pd.factorize(frame["format"])
    prio = np.array([FORMAT_PRIORITY.get(f, 9) for f in formats], dtype="int64")[codes]
    keyed = frame.assign(_v32=v32, _prio=prio)
    keyed = keyed.sort_values(["abandoned", "_prio", "segment"], kind="stable", ascending=[True, True, False])
    keyed = keyed.drop_duplicates(["step", "metric", "_v32"], keep="first")
    return keyed.sort_index().drop(columns=["_v32", "_prio"])


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
