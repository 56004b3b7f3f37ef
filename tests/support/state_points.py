"""A trainer_state timeline built from `{metric: {step: value}}` points, and the analyzers' reading of it: the shared
helpers of the tests that judge a run given as a handful of logged points (first-pass mismatch, overfitting on two
evaluations, policy collapse)."""
from __future__ import annotations

import pandas as pd

from forensics.analyzers import first_incident_of, run_all, status_of
from forensics.config import Thresholds
from forensics.timeline import LogRecords, build_timeline


def points_timeline(points: dict[str, dict[int, float]]):
    """A trainer_state timeline of `points` {metric: {step: value}}."""
    rows = sorted((step, metric, value) for metric, series in points.items() for step, value in series.items())
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": float("nan")})
    return build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])


def first_of(points):
    """(status, (kind, severity, step) of the first incident or None, findings) of the run the points make."""
    findings = run_all(points_timeline(points), Thresholds())
    first = first_incident_of(findings)
    return status_of(findings), None if first is None else (first.kind, first.severity, first.step), findings


def finding_kinds(points) -> list[tuple[str, str, int]]:
    """(kind, severity, step) of every finding on the run the points make."""
    return [(f.kind, f.severity, f.step) for f in run_all(points_timeline(points), Thresholds())]
