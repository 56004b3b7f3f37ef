"""Where a run's logs overlap, which rows stand: `timeline.build_timeline` asks this module.

* a file whose step goes backwards holds several attempts (`attempts`); a later attempt of the same kind
  of log supersedes the earlier one from its first step on (`mark_superseded`, ordered by `start_key`), and
  the rows it replaced are kept but marked `abandoned`; a checkpoint's copy of the history is no later attempt;
* the same point seen in several files (trainer_state.json and its float32 copy in TensorBoard, the copy
  of log_history in every checkpoint) is kept once, from the most precise source (`FORMAT_PRIORITY`,
  `drop_duplicate_points`, `one_per_step_metric`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

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


def one_per_step_metric(rows: pd.DataFrame) -> pd.DataFrame:
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


# Counters an engine prints on its own lines with its own exact step (DeepSpeed's `step=N, skipped=K`), beside log
# lines whose steps may be estimates (HF dicts numbered by position): where the two orders disagree, it is not a resume.
_ENGINE_COUNTERS = ("skipped_steps",)


# A reader's frame may say which launch appended each row (column `LAUNCH`), where the file marks each start (the
# settings line a script writes as it starts: ingest.loss_number_files): a launch that counts from the step the one
# before it ended at (one point at iteration 1, then a launch from 1 again) is a new attempt all the same
LAUNCH = "launch"


def attempt_numbers(frame: pd.DataFrame) -> np.ndarray:
    """The attempt number of each row: a step below the one before it starts a new attempt (a resume or a new
    session), and so does a new `LAUNCH` where the frame says them. Engine counter rows (`_ENGINE_COUNTERS`) do not
    start one: they belong to the attempt of the row before them (of the one after, at the file's start), and the
    order is read from the other rows alone."""
    steps = frame["step"].to_numpy()
    if LAUNCH in frame.columns:
        launches = frame[LAUNCH].to_numpy()
        return np.concatenate([[0], np.cumsum((np.diff(steps) < 0) | (np.diff(launches) != 0))])
    counter = frame["metric"].isin(_ENGINE_COUNTERS).to_numpy()
    if not counter.any() or counter.all():
        return np.concatenate([[0], np.cumsum(np.diff(steps) < 0)])
    others = np.flatnonzero(~counter)
    of_others = np.concatenate([[0], np.cumsum(np.diff(steps[others]) < 0)])
    attempt = np.full(len(steps), -1, dtype="int64")
    attempt[others] = of_others
    before = np.maximum.accumulate(np.where(attempt >= 0, np.arange(len(steps)), -1))
    return np.where(before >= 0, attempt[np.maximum(before, 0)], of_others[0])


def start_key(part: pd.DataFrame, mtime: float, global_step, attempt: int) -> tuple:
    """Sort key for 'which attempt came later' within one kind of log.

    TensorBoard rows carry wall times: the attempt's first one says when it started. Files
    without wall times are ordered by mtime (when clearly apart), then by how far they got (`global_step`,
    what the file says it reached, else its last step).
    """
    wall = part["wall_time"].to_numpy(dtype="float64")
    wall = wall[np.isfinite(wall)]
    if wall.size:
        return (float(wall.min()), 0, attempt)
    mtime = mtime if math.isfinite(mtime) else 0.0
    bucket = math.floor(mtime / MTIME_RESOLUTION_S)
    reached = global_step if type(global_step) is int else int(part["step"].max())  # null/str in odd files
    return (float(bucket), reached, attempt)


# LogRecords.meta key: the attempts (`attempt_numbers`) of a console that begin where its launcher or script printed its
# start line again (`ingest.launch_banners`): launches, in the file's order however few points they logged
LAUNCHED_ATTEMPTS = "launched_attempts"


def file_reach(frame: pd.DataFrame, launched: tuple[int, ...] | list[int] = ()):
    """What each attempt of one file counts as having reached, for `start_key`: a launch that logs a training curve of
    its own (`_CURVE_POINTS` loss points) the file's last step, so that the file's order says which launch came
    later (junkwhinger_babynames_generator appends 165 launches to one log, a longer abandoned one before the last);
    a part without one (an evaluation or closing summary a console dated at step 0: Ka0Ri_RAG, REICHIYAN_llm_ft_
    tinyllama) its own last step, as before. In a file of evaluations alone the curve is the held-out loss
    (nytseng_llm-reliability-llama2-lora's eval_loss.log: 15 cross-validation folds, the longest not the last). An
    attempt the file's own start line began (`launched`) is a launch too, one point or more (jtaylor-eng_attention_
    experiments: the last of 52 sessions logs only its step 0, and ends the file)."""
    last = int(frame["step"].max())
    curve = "loss" if (frame["metric"] == "loss").any() else "eval_loss"

    def reach(part: pd.DataFrame, attempt: int) -> int | None:
        return last if attempt in launched or (part["metric"] == curve).sum() >= _CURVE_POINTS else None
    return reach


_CURVE_POINTS = 2


def mark_superseded(frame: pd.DataFrame, seg_rows: list[dict]) -> np.ndarray:
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
            cut[s["id"]] = min((t["first_step"] for t in newer if _logged_in_common(t, s, logged)), default=math.inf)
            if s["id"] not in copies:
                newer.append(s)
    return frame["step"].to_numpy() >= cut[frame["segment"].to_numpy()]


def _logged_in_common(newer: dict, older: dict, logged: dict[int, set]) -> set:
    """The metrics two segments both log, less the epoch counter: a later part that logs an epoch beside other metrics
    than the earlier one's does not log the earlier one again. So are entries out of step order told from a relaunch,
    which logs its curve again: the HF Trainer's final evaluation writes its own event file, epoch beside eval_*,
    after the training file's closing train_loss (Bensonluo_4bit-QLoRA-post-training), and a log_history whose
    evaluation entries come after the training ones (a history put together by hand) holds one run, where read as a
    relaunch its training loss from the first evaluation's step on was thrown away."""
    return (logged[newer["id"]] & logged[older["id"]]) - {"epoch"}


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
                   and not _launches_of_one_file(s, t)
                   and np.isin(points[s["id"]], points[t["id"]], assume_unique=True).all() for t in segs)}


def _launches_of_one_file(s: dict, t: dict) -> bool:
    """Two launches a file marks (`LAUNCH`): a later one that logs the same values as an earlier one at its steps (a
    validation written as 0.0000 at every iteration of every launch: RohollahHS_ChatBot) is a launch, not a copy."""
    return s.get("launch_marked", False) and s["source"] == t["source"]


def drop_duplicate_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep one row per (step, metric, float32 value) from one file: standing rows first, then the most precise source.
    Two attempts of one file that log the same value at a step (a relaunch with the same seed replays its first
    steps) are two launches' points, each kept in its attempt: only a copy in another file is the same point (the
    first launch's start is where the run began: Tjk20011226-cmd_Llama-chinese's launches all open at 10.6353)."""
    v32 = as_float32(frame["value"])
    # Map the few distinct formats, not every row (a per-row .map is most of the time at 1M rows).
    codes, formats = pd.factorize(frame["format"])
    prio = np.array([FORMAT_PRIORITY.get(f, 9) for f in formats], dtype="int64")[codes]
    keyed = frame.assign(_v32=v32, _prio=prio)
    keyed = keyed.sort_values(["abandoned", "_prio", "segment"], kind="stable", ascending=[True, True, False])
    keyed = keyed.drop_duplicates(["segment", "step", "metric", "_v32"], keep="first")
    point = pd.util.hash_pandas_object(keyed[["step", "metric", "_v32"]], index=False)
    kept_source = keyed["source"].groupby(point.to_numpy(), sort=False).transform("first")
    return keyed[keyed["source"] == kept_source].sort_index().drop(columns=["_v32", "_prio"])
