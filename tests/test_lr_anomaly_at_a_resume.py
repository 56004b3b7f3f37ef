"""A cosine LR that falls by more than half at once at a resume is an LR anomaly (forensics/analyzers/lr_anomaly.py),
while step decays, warm restarts and plain decays stay silent.

From batch AS65's learning-rate misses (tests/realworld/PROVENANCE.md: wadkisson_Personal-Chatbot). Rates are written
here."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from forensics.analyzers.lr_anomaly import detect_lr_anomalies
from forensics.config import Thresholds


TH = Thresholds()


def _rates(values, every=1):
    return {"learning_rate": pd.Series(values, index=np.arange(len(values)) * every, dtype="float64")}


def _cosine(step: int, offset: int = 0, peak=6e-4, floor=6e-5, warmup=715, total=19073) -> float:
    """nanoGPT's get_lr, printed to six decimals as wadkisson's loss_history.txt has it."""
    step += offset
    if step < warmup:
        return round(peak * (step + 1) / warmup, 6)
    ratio = min(1.0, (step - warmup) / (total - warmup))
    return round(floor + 0.5 * (1 + math.cos(math.pi * ratio)) * (peak - floor), 6)


def test_a_cosine_rate_falling_by_half_at_once_at_a_resume_is_an_lr_anomaly():
    # resumed at 6300 with the offset added twice: the schedule goes on from step 12600's rate
    values = [_cosine(s) for s in range(6301)] + [_cosine(s, offset=6300) for s in range(6301, 9000)]
    found = detect_lr_anomalies(_rates(values), TH)
    assert [(f.kind, f.step, f.severity) for f in found] == [("lr_anomaly", 6301, "warning")]
    assert found[0].evidence["fell_at_once"] and "57% in one step" in found[0].message


def test_step_decays_warm_restarts_and_plain_decays_fall_silent():
    step_lr = [0.1 * 0.1 ** (s // 3000) for s in range(9000)]  # StepLR(step_size=3000, gamma=0.1), every step
    multi_step = [1e-3 * (s / 500) if s < 500 else 1e-3 * 0.5 ** sum(s >= m for m in (4000, 6000)) for s in range(8000)]
    plateau = [1e-3] * 40 + [1e-4] * 30 + [1e-5] * 30  # ReduceLROnPlateau, one point an epoch
    restarts = [1e-5 + 0.5 * (1 + math.cos(math.pi * (s % 1000) / 1000)) * 1e-3 for s in range(5000)]  # SGDR
    linear_to_zero = [3e-4 * (1 - s / 2000) for s in range(2001)]
    cosine = [_cosine(s) for s in range(19073)]
    sparse_cosine = [1e-3 * 0.5 * (1 + math.cos(math.pi * k / 12)) for k in range(13)]  # 13 points a whole decay
    for values in (step_lr, multi_step, plateau, restarts, linear_to_zero, cosine, sparse_cosine):
        assert detect_lr_anomalies(_rates(values), TH) == []
