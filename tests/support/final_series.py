"""A run's analysis without its checkpoints, and one metric's series in its final history."""
from __future__ import annotations

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _series(analysis, metric):
    """{step: value} of one metric in the analysis' final history."""
    rows = analysis.timeline.final()
    rows = rows[rows["metric"] == metric]
    return dict(zip(rows["step"].astype(int), rows["value"]))
