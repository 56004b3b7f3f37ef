"""Two log files of one run that disagree on a point: reported, never settled in silence.

A run folder often holds the same history several times: trainer_state.json, TensorBoard, W&B,
MLflow. The timeline keeps one value per (step, metric), from the most precise file; where another
file says something else at the same point (a W&B folder of another run, a tracker resumed
differently, a writer's bug), the analysis stands on a choice the user should see.

Only files that keep a logged float as it was are compared (EXACT_FORMATS: trainer_state.json,
TensorBoard in float32, W&B, MLflow); console logs and LLaMA-Factory / ms-swift JSON lines round
their numbers. Rows a resume threw away are not compared. One warning per pair of files.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..findings import Finding, plural, source_name
from ..log_attempts import as_float32
from ..timeline import Timeline
from .metrics import format_number

EXACT_FORMATS = ("trainer_state", "tensorboard", "wandb", "mlflow")
COLUMNS = ["step", "metric", "value", "source", "other_value", "other_source"]


def source_disagreements(timeline: Timeline) -> pd.DataFrame:
    """One row per point where a file disagrees with the value the final history keeps.

    Columns: step, metric, value and source (what the timeline keeps), other_value and
    other_source (the file that says otherwise). Values equal in float32 (TensorBoard's precision) or
    to 4 significant digits or 4 decimals (`_PRINTED_DIGITS`), and NaN beside NaN, agree. Empty when every file agrees.
    """
    final = timeline.final()
    standing = timeline.frame[~timeline.frame["abandoned"]]
    if len(standing) == len(final):  # one row per (step, metric): nothing to compare (the common case, cheap)
        return pd.DataFrame(columns=COLUMNS)
    kept = final[final["format"].isin(EXACT_FORMATS)][["step", "metric", "value", "source"]]
    others = standing[standing["format"].isin(EXACT_FORMATS)][["step", "metric", "value", "source"]]
    pairs = others.merge(kept, on=["step", "metric"], suffixes=("_other", ""))
    pairs = pairs[(pairs["source_other"] != pairs["source"]) & ~_same(pairs["value"], pairs["value_other"])]
    pairs = pairs.rename(columns={"value_other": "other_value", "source_other": "other_source"})
    return pairs[COLUMNS].sort_values(["step", "metric"], kind="stable").reset_index(drop=True)


# Two values within this of each other, relatively, agree: one file wrote the number to 4 significant digits (a
# Trainer's 4-decimal loss over 1, a JSON written by hand) where the other kept it whole; and within half the last of
# 4 decimals (a Trainer's rounding of a loss under 1). Two runs' logs differ by more.
_PRINTED_DIGITS, _PRINTED_DECIMALS = 5e-4, 5e-5


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    a32, b32 = as_float32(a), as_float32(b)
    # (isclose holds for equal values, infinities of one sign included)
    close = np.isclose(a32.astype("float64"), b32.astype("float64"), rtol=_PRINTED_DIGITS, atol=_PRINTED_DECIMALS)
    return close | (np.isnan(a32) & np.isnan(b32))


def detect_source_disagreements(timeline: Timeline) -> list[Finding]:
    """A `source_disagreement` warning per pair of files that disagree, at the first point they do."""
    rows = source_disagreements(timeline)
    findings = []
    for (kept, other), group in rows.groupby(["source", "other_source"], sort=False):
        first = group.iloc[0]
        metrics = sorted(set(group["metric"]))
        message = (f"{source_name(other)} disagrees with {source_name(kept)} on {plural(len(group), 'point')} "
                   f"({', '.join(metrics)}) from step {int(first['step'])}: {first['metric']} "
                   f"{format_number(first['other_value'])} there, {format_number(first['value'])} in the file the "
                   "analysis uses. Two runs' logs in one folder?")
        findings.append(Finding(
            kind="source_disagreement", severity="warning", step=int(first["step"]),
            end_step=int(group["step"].max()), metric=str(first["metric"]), message=message,
            evidence={"kept_source": kept, "other_source": other, "points": len(group), "metrics": metrics,
                      "kept_value": float(first["value"]), "other_value": float(first["other_value"])}))
    return findings
