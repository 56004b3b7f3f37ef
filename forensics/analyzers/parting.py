"""Where two runs part: the first point at which one run's metric leaves the other's band.

The reference run (the one that worked) gives a band around each of its points: its rolling median
plus or minus its own noise (a robust spread, never less than a fraction of the level). The other
run parts from it at the first of `points` consecutive logged points outside that band, or at the
first point where it is non-finite while the reference is finite. Points are matched on a common
axis: the optimizer step, or samples seen when the runs' batch sizes differ (`scale`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

# The metrics where two runs are compared for the step they part (compare, and its report).
PARTING_METRICS = ("loss", "grad_norm", "learning_rate", "eval_loss", "loss_scale")
_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Parting:
    """The first point where `metric` of run `run` leaves the band of run `reference`.

    Fields:
        metric: the timeline metric.
        run / reference: indices of the run that parts and of the run it is measured against.
        step: the parting run's own step there; position: the same point on the common axis.
        axis: "step" or "samples".
        value / reference_value / band: the two values and the band (low, high) at that point.
        nonfinite: True when the run parted by going NaN/Inf.
    """

    metric: str
    run: int
    reference: int
    step: int
    position: float
    axis: str
    value: float
    reference_value: float
    band: tuple[float, float]
    nonfinite: bool

    def to_dict(self) -> dict:
        return {"metric": self.metric, "step": int(self.step), "run": self.run, "reference": self.reference,
                "position": float(self.position), "axis": self.axis, "value": self.value,
                "reference_value": self.reference_value, "band": list(self.band), "nonfinite": self.nonfinite}


def parting_point(reference: pd.Series, other: pd.Series, *, scale_ref: float = 1.0, scale_other: float = 1.0,
                  window: int = 11, noise_z: float = 4.0, rel_floor: float = 0.05, points: int = 3
                  ) -> tuple[int, float, float, float, tuple[float, float], bool] | None:
    """The first point where `other` leaves the band of `reference`, or None if it never does.

    Both Series are indexed by step; `scale_*` turns a step into the common axis (samples per step).
    Returns (step of other, position on the axis, other's value, reference value, band, nonfinite).

    >>> ref = pd.Series([4.0, 3.0, 2.5, 2.2, 2.0, 1.9, 1.8, 1.8], index=range(10, 90, 10))
    >>> other = pd.Series([4.0, 3.0, 2.6, 5.0, 9.0, 12.0, 20.0, float("nan")], index=range(10, 90, 10))
    >>> parting_point(ref, other)[0]
    40
    """
    ref = reference.astype("float64")
    if len(ref) < 2 or other.empty:
        return None
    ref_x = ref.index.to_numpy(dtype="float64") * scale_ref
    level, spread = _band_of(ref, window)
    outside = 0
    for step, value in other.astype("float64").items():
        x = float(step) * scale_other
        if x < ref_x[0] or x > ref_x[-1]:
            continue  # outside the reference's range there is nothing to compare with
        centre = float(np.interp(x, ref_x, level))
        width = max(noise_z * float(np.interp(x, ref_x, spread)), rel_floor * abs(centre))
        band = (centre - width, centre + width)
        if not np.isfinite(value):
            if np.isfinite(centre):
                return int(step), x, value, centre, band, True
            continue
        outside = outside + 1 if not band[0] <= value <= band[1] else 0
        if outside == 1:
            first = (int(step), x, value, centre, band)
        if outside >= points:
            return (*first, False)
    return None


def _band_of(ref: pd.Series, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference's rolling median and robust spread (MAD as a standard deviation), non-finite left out."""
    finite = ref.where(np.isfinite(ref))
    rolling = finite.rolling(window, center=True, min_periods=1)
    level = rolling.median()
    spread = (finite - level).abs().rolling(window, center=True, min_periods=1).median() * _MAD_TO_SIGMA
    return level.ffill().bfill().to_numpy(), spread.fillna(0.0).to_numpy()
