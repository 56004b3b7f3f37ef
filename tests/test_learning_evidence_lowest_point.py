"""The 2.5-SE line to the lowest point as learning evidence (forensics/analyzers/fall_measure.py,
learning_evidence.py): only over the lengths its false rate was simulated on.

From branch fx-review3a (review of session 22's analyzer changes: each behaviour test FAILS on main at 57e0ca20 and
passes after; its control holds before and after)."""
from __future__ import annotations

import pandas as pd

from forensics.config import Thresholds


# ---- 6. the 2.5-SE line to the lowest point: only over the lengths its false rate was simulated on --------------------


def test_six_points_of_flat_noise_ending_on_their_lowest_show_no_learning():
    """Six draws of flat noise (seeded, sd 0.03 about 1.0) whose last is the lowest, the line through them falling
    2.5 units: the 2.5-unit rule's false rate was simulated on 10 to 20 points (bench/lowest_end_trend.py: 1.2% at
    10 points beside the 3-unit line's 2.1%; at 6 points the line alone already passes 5% of flat logs)."""
    from forensics.analyzers.fall_measure import fell_clearly
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    flat = pd.Series([1.0036, 1.0201, 1.0137, 1.0148, 1.0046, 0.9769], index=[10, 20, 30, 40, 50, 60])
    assert not fell_clearly(flat, Thresholds())[0]
    assert [f.kind for f in detect_no_learning_evidence({"loss": flat}, Thresholds())] == ["no_learning_evidence"]


def test_fourteen_points_falling_two_and_a_half_units_to_their_lowest_still_show_learning():
    """SavinovSergey_shad_homeworks' 14 window means (tests/test_trend_to_its_lowest.py): over the simulated floor."""
    from forensics.analyzers.fall_measure import fell_clearly
    fresh_files = [0.6569, 0.6642, 0.6210, 0.5956, 0.6176, 0.6078, 0.6197, 0.6475, 0.6590, 0.6172, 0.6270, 0.5992,
                   0.5881, 0.5787]
    assert fell_clearly(pd.Series(fresh_files, index=[10 * (k + 1) for k in range(14)]), Thresholds())[0]
