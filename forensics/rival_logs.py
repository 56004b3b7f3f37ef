"""Two runs' logs in one folder: the one timeline is made of one of them, and a note names both.

The timeline merges every log of a folder point by point: a copy of the same point is kept once, a resume supersedes
the attempt it replaced (see `timeline`). A folder may also hold the logs of two different runs (a trainer_state.json
of one beside the trainer_log.jsonl of another): merged, they would make one curve of both, the first steps of one and
the rest of the other. Two logs are of two runs where, at the steps both logged, their losses differ by more than a
printed number's rounding or a log's averaging could make them (`RIVAL_GAP`, the median over those steps). Of two such
logs, the one covering more steps is read; the other is left out with a note naming both (what was kept, and why).

    timeline, left_out = one_run_timeline(records)   # left_out: Skipped lines, one per log set aside
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .findings import Skipped, plural, source_name
from .timeline import LogRecords, Timeline, build_timeline

# The metric the comparison reads: two files of one run log the same training loss at a step (averaged over the same
# logging steps); a schedule (learning rate, epoch) may well agree between two runs, so it tells nothing.
COMPARED_METRIC = "loss"
# Two logs of one run differ at a step by the rounding of a printed number (4 decimals, 4 significant digits) or, where
# one prints a running mean, by some per-step noise; two runs' losses differ by more over most of the steps both logged.
RIVAL_GAP = 0.2
MIN_SHARED_STEPS = 3  # fewer steps in common say nothing either way


def one_run_timeline(records: list[LogRecords]) -> tuple[Timeline, list[Skipped]]:
    """The Timeline of `records`, made of one run's logs where two files are two runs (see the module docstring),
    and a Skipped line for each log left out, naming the log kept."""
    timeline = build_timeline(records)
    left_out = rival_logs(timeline)
    if not left_out:
        return timeline, []
    kept = [rec for rec in records if rec.source not in left_out]
    return build_timeline(kept), [Skipped(source, reason) for source, reason in left_out.items()]


def rival_logs(timeline: Timeline) -> dict[str, str]:
    """Source -> why it is left out, for each log whose loss disagrees with a log covering more steps; {} for none.

    The logs are taken by how many steps they cover, most first; each is kept unless its loss disagrees with one
    kept before it (a log that shares too few steps with those kept is kept: nothing shows it is another run's).
    """
    standing = timeline.frame[~timeline.frame["abandoned"]]
    # a log whose steps the reader numbered by estimate (dict lines by their epoch or place) cannot be compared step
    # by step: its points sit a logging interval or two off the true ones
    estimated = [source for source, meta in timeline.meta.items() if meta.get("step_inferred")]
    losses = standing[(standing["metric"] == COMPARED_METRIC) & ~standing["source"].isin(estimated)]
    if losses["source"].nunique() < 2:  # the common case: one log of the loss, nothing to compare
        return {}
    coverage = standing.groupby("source")["step"].nunique().sort_values(ascending=False, kind="stable")
    by_source = {source: rows.set_index("step")["value"].groupby(level=0).last()
                 for source, rows in losses.groupby("source", sort=False)}
    kept: list[str] = []
    left_out: dict[str, str] = {}
    for source in coverage.index:
        rival = next((k for k in kept if source in by_source and k in by_source
                      and _disagree(by_source[k], by_source[source])), None)
        if rival is None:
            kept.append(source)
        else:
            left_out[source] = _why_left_out(source, rival, by_source, coverage)
    return left_out


def _shared(a: pd.Series, b: pd.Series) -> pd.DataFrame:
    """The steps both losses logged, with finite values in both (a NaN is damage, not another run)."""
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    return both[np.isfinite(both["a"]) & np.isfinite(both["b"])]


def _disagree(a: pd.Series, b: pd.Series) -> bool:
    shared = _shared(a, b)
    if len(shared) < MIN_SHARED_STEPS:
        return False
    scale = np.maximum(shared["a"].abs(), shared["b"].abs()).replace(0.0, np.nan)
    gap = ((shared["a"] - shared["b"]).abs() / scale).fillna(0.0)
    return float(gap.median()) > RIVAL_GAP


def _why_left_out(source: str, kept: str, by_source: dict, coverage: pd.Series) -> str:
    shared = _shared(by_source[kept], by_source[source])
    first = shared.index[0]
    return (f"not read: it and {source_name(kept)} log {COMPARED_METRIC} at the same steps "
            f"({plural(len(shared), 'step')}, {first} to {shared.index[-1]}) with other values "
            f"({COMPARED_METRIC} {shared['b'].iloc[0]:.4g} here at step {first}, {shared['a'].iloc[0]:.4g} there): "
            f"two runs' logs in one folder. The analysis reads "
            f"{source_name(kept)}, which covers more steps ({coverage[kept]}; this one {coverage[source]})")
