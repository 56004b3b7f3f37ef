"""A noisy log whose least-squares line falls by 2.5 standard errors (not the 3 a line alone needs) and that ends on
its lowest point shows learning (SavinovSergey_shad_homeworks: a QLoRA on fresh code files every step, 14 window
means 0.6569 ... 0.5787, its last the lowest); the same line over a log that ends above its lowest point, and a flat
log, still get their `no_learning_evidence` warning."""
import pandas as pd

from forensics.analyzers.fall_measure import fell_clearly
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.config import Thresholds

# SavinovSergey_shad_homeworks' Trainer table, steps 10 to 140 (the corpus case's numbers)
_FRESH_FILES = [0.6569, 0.6642, 0.6210, 0.5956, 0.6176, 0.6078, 0.6197, 0.6475, 0.6590, 0.6172, 0.6270, 0.5992,
                0.5881, 0.5787]


def _loss(values: list[float]) -> dict:
    return {"loss": pd.Series(values, index=[10 * (k + 1) for k in range(len(values))], dtype="float64")}


def _kinds(values: list[float]) -> list[str]:
    return [f.kind for f in detect_no_learning_evidence(_loss(values), Thresholds())]


def test_a_line_falling_two_and_a_half_units_to_the_logs_lowest_point_shows_learning():
    assert fell_clearly(pd.Series(_FRESH_FILES, dtype="float64"), Thresholds())[0]
    assert _kinds(_FRESH_FILES) == []


def test_the_same_line_ending_above_its_lowest_point_still_warns():
    """The last point 0.5950 instead of 0.5787: the line still falls by 2.5 units (not 3), but the log ends above its
    lowest point (0.5881, the one before)."""
    ends_above = _FRESH_FILES[:-1] + [0.5950]
    assert _kinds(ends_above) == ["no_learning_evidence"]


def test_a_flat_log_ending_on_its_lowest_point_still_warns():
    """Swings about one level whose last point happens to be the lowest: no falling line under it."""
    flat = [0.62, 0.60, 0.63, 0.61, 0.64, 0.60, 0.63, 0.61, 0.62, 0.64, 0.60, 0.63, 0.61, 0.595]
    assert _kinds(flat) == ["no_learning_evidence"]
