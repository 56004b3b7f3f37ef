"""A fresh model's memorization found over late passes dated where its loss went under 1 nat
(forensics/analyzers/memorization.py, dated_under_pretraining_floor).

Corpus case: stopstressingmeout_Next-Word-Prediction-Using-LSTM (an epoch's summed loss read per batch)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.memorization import dated_under_pretraining_floor
from forensics.findings import Finding


CASE = Path(__file__).parent / "realworld" / "stopstressingmeout_Next-Word-Prediction-Using-LSTM"


def test_a_fresh_models_late_passes_memorization_is_dated_under_one_nat():
    loss = pd.Series([5.6, 3.0, 1.5, 1.1, 0.9, 0.8, 0.7, 0.6, 0.45, 0.4, 0.3, 0.2, 0.15],
                     index=range(1, 14), dtype="float64")
    found = Finding("memorization", "warning", 12, "m", metric="loss",
                    evidence={"level": 0.2, "late_passes": True, "settled_step": 12})
    assert dated_under_pretraining_floor(found, loss, built_here=True).step == 5  # under 1 nat from 5, under 0.5 from 9
    other = Finding("memorization", "warning", 12, "m", metric="loss", evidence={"level": 0.2, "settled_step": 12})
    assert dated_under_pretraining_floor(other, loss, built_here=True).step == 9


def test_a_start_from_random_weights_read_off_the_loss_alone_keeps_the_pretraining_floor():
    # Miki-Palmisano_BLOOMZ-Solidity_Train: a fine-tune whose profile reads pretrain from its loss level alone
    loss = pd.Series([5.6, 3.0, 1.5, 1.1, 0.9, 0.8, 0.7, 0.6, 0.45, 0.4, 0.3, 0.2, 0.15],
                     index=range(1, 14), dtype="float64")
    found = Finding("memorization", "warning", 12, "m", metric="loss",
                    evidence={"level": 0.2, "late_passes": True, "settled_step": 12})
    assert dated_under_pretraining_floor(found, loss).step == 9


def test_the_case_is_memorization_dated_where_the_per_batch_loss_went_under_one_nat():
    analysis = forensics.analyze(str(CASE))
    assert (analysis.status, analysis.first_incident.kind) == ("warning", "memorization")
    assert math.isclose(analysis.first_incident.step, 20, abs_tol=5)
