"""Memorization of fresh models over many passes (forensics/analyzers/memorization.py, memorization_onset.py).

Memorization of small models trained from random weights with nothing held out (fx-memo): a Keras `model.fit` log
counts its passes by its steps, a fall after the first pass down under the pre-training floor, held there over many
passes, is memorization though the log's first point is an epoch mean, dated where the loss went under what held-out
text reaches."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.memorization import memorized_from_scratch
from forensics.analyzers.memorization_onset import HELD_OUT_LEVEL, dated_under_held_out_level
from forensics.config import Thresholds
from forensics.findings import Finding

TH = Thresholds()
CORPUS = Path(__file__).parent / "realworld"


def _epoch_log(loss: np.ndarray) -> dict[str, pd.Series]:
    """One point an epoch, as Keras's `model.fit` lines give it: step E, epoch E."""
    index = np.arange(1, len(loss) + 1, dtype="int64")
    return {"loss": pd.Series(loss, index=index, dtype="float64"),
            "epoch": pd.Series(index.astype("float64"), index=index)}


def _char_model_over(epochs: int, first: float, floor: float, half_life: float) -> np.ndarray:
    """An epoch-mean loss from `first` (epoch 1, already under ln V) falling geometrically to `floor`."""
    e = np.arange(epochs, dtype="float64")
    return floor + (first - floor) * 0.5 ** (e / half_life)


def test_a_fresh_model_under_the_floor_after_many_passes_is_memorized_though_its_first_point_is_an_epoch_mean():
    """KarlYang2013_tf_study's shape: a char LSTM's epoch means 2.62 -> 0.38 over 100 epochs, flat for the last 40;
    under sevenfold from the first epoch's mean, but fallen 4x and more after the first pass."""
    loss = _char_model_over(100, 2.62, 0.38, 6.0)
    (f,) = memorized_from_scratch(_epoch_log(loss), TH)
    assert f.kind == "memorization" and "first pass" in f.message
    assert loss[f.evidence["settled_step"] - 1] <= 0.5  # settled under the pre-training floor ...
    assert f.step == 1 + np.flatnonzero(loss < HELD_OUT_LEVEL)[0]  # ... dated where it went under 1 nat


@pytest.mark.parametrize("loss", [
    _char_model_over(10, 2.57, 1.70, 3.0),  # Sandhiya-G28: ten passes, 2.57 -> 1.72 a character, never near the floor
    _char_model_over(100, 1.12, 0.40, 20.0),  # under the floor after 100 passes, but under 3x after the first pass
    _char_model_over(8, 4.0, 0.30, 1.0),  # under the floor and far down, but eight passes: not many
    _char_model_over(10, 2.75, 0.30, 2.5),  # factoryfist-wq's shape: under the floor only over its last passes
])
def test_a_fresh_model_that_did_not_fall_far_after_its_first_pass_or_made_few_passes_is_not_memorized(loss):
    assert memorized_from_scratch(_epoch_log(loss), TH) == []


def _memorized_at(step: int) -> Finding:
    return Finding("memorization", "warning", step, "loss falls ... (memorization).", end_step=150, metric="loss")


def test_a_fresh_models_memorization_is_dated_where_its_loss_settled_under_one_nat():
    """G9999_char-rnn-demo's shape: under 1 nat from epoch 31, under 0.5 from 51, the rule's own date."""
    loss = pd.Series(_char_model_over(150, 3.6, 0.08, 12.0), index=np.arange(1, 151))
    under = int(loss.index[np.flatnonzero(loss.to_numpy() < HELD_OUT_LEVEL)[0]])
    dated = dated_under_held_out_level(_memorized_at(120), loss)
    assert dated.step == under and dated.evidence["rule_step"] == 120 and "under 1 nat" in dated.message


def test_dating_under_one_nat_leaves_other_findings_and_earlier_dates_alone():
    loss = pd.Series(_char_model_over(150, 3.6, 0.08, 12.0), index=np.arange(1, 151))
    spike = Finding("loss_spike", "warning", 120, "a spike", metric="loss")
    assert dated_under_held_out_level(spike, loss) == spike
    assert dated_under_held_out_level(_memorized_at(5), loss).step == 5  # already before the loss went under 1
    high = pd.Series(_char_model_over(150, 3.6, 1.2, 12.0), index=np.arange(1, 151))
    assert dated_under_held_out_level(_memorized_at(120), high).step == 120  # never under 1 nat


@pytest.mark.parametrize("case, judged, tolerance", [
    ("G9999_char-rnn-demo", 31, 10),  # was loss_spike at 140: memorization at 146, under 0.2
    ("KarlYang2013_tf_study", 17, 8),  # was healthy: 2.62 -> 0.38 is 6.8x from the first epoch's mean
])
def test_real_fresh_char_models_are_memorized_from_where_they_went_under_one_nat(case, judged, tolerance):
    import forensics
    analysis = forensics.analyze(CORPUS / case)
    assert analysis.first_incident.kind == "memorization"
    assert abs(analysis.first_incident.step - judged) <= tolerance


def test_a_real_fresh_char_model_ten_passes_in_stays_healthy():
    """HannaKi_Deep_Learning_in_LangTech_course: 2.09 -> 0.95 a character over ten passes, still falling (healthy)."""
    import forensics
    assert forensics.analyze(CORPUS / "HannaKi_Deep_Learning_in_LangTech_course").status == "healthy"
