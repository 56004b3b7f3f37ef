"""A reference-based DPO log whose loss falls slowly but steadily under ln 2 - many times its own point-to-point noise,
over many points - while its reward margin rises clearly has learned, though its loss ends short of the fixed
`PAIRWISE_CLEAR` gap (aelalamy42's TRL DPO at LR 2e-7: 500-step means 0.6930 -> 0.6700, margins 0.0003 -> 0.0557).
A fall within the noise, a flat margin, a handful of points or an ORPO log (its loss carries an NLL term) is not
evidence by this measure. Nor is a training reward accuracy that rose from one few-pair batch to another by less than
its own batch-to-batch noise explains (intel-analytics' five 16-pair warm-up batches, 0.4375 -> 0.6875)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.analyzers.preference_pairs import pairs_told_apart
from forensics.config import Thresholds

LN2 = float(np.log(2))
CASE = Path(__file__).parent / "realworld" / "aelalamy42_CS-552-FLEPBot"
FEW_BATCHES = Path(__file__).parent / "realworld" / "intel-analytics_ipex-llm"


def _slow_dpo(points: int = 62, end: float = 0.670, noise: float = 0.002, margin_end: float = 0.055,
              seed: int = 0) -> dict[str, pd.Series]:
    rng = np.random.default_rng(seed)
    index = pd.Index(np.arange(1, points + 1) * 500)
    loss = np.linspace(LN2, end, points) + rng.normal(0, noise, points)
    loss[0] = LN2
    margins = np.linspace(0.0003, margin_end, points) + rng.normal(0, 0.002, points)
    chosen = np.linspace(0.001, 0.266, points)
    accuracy = 0.63 + rng.normal(0, 0.01, points)  # flat-ish: no accuracy evidence
    return {"loss": pd.Series(loss, index), "rewards/margins": pd.Series(margins, index),
            "rewards/chosen": pd.Series(chosen, index), "rewards/rejected": pd.Series(chosen - margins, index),
            "rewards/accuracies": pd.Series(accuracy, index)}


def test_a_slow_steady_fall_under_ln2_with_rising_margins_is_learning():
    metrics = _slow_dpo()
    _, train = pairs_told_apart(metrics, Thresholds())
    assert train is not None and train.metric == "loss" and train.end > LN2 - 0.03
    assert detect_no_learning_evidence(metrics, Thresholds()) == []


def test_a_fall_within_the_logs_own_noise_is_not():
    metrics = _slow_dpo(end=0.685, noise=0.02)
    assert pairs_told_apart(metrics, Thresholds())[1] is None
    assert [f.kind for f in detect_no_learning_evidence(metrics, Thresholds())] == ["no_learning_evidence"]


def test_a_flat_margin_is_not():
    metrics = _slow_dpo(margin_end=0.0003)
    assert pairs_told_apart(metrics, Thresholds())[1] is None


def test_a_handful_of_points_is_not_read_this_way():
    metrics = {k: v.iloc[::9] for k, v in _slow_dpo().items()}  # 7 points
    assert pairs_told_apart(metrics, Thresholds())[1] is None


def test_an_orpo_loss_is_not_read_against_ln2():
    metrics = _slow_dpo()
    metrics["nll_loss"] = pd.Series(np.full(len(metrics["loss"]), 1.2), metrics["loss"].index)
    assert pairs_told_apart(metrics, Thresholds())[1] is None


def test_a_clear_dpo_fall_is_still_evidence_as_before():
    metrics = _slow_dpo(end=0.45, margin_end=0.0003)  # the fixed gap alone shows it, the margin flat
    _, train = pairs_told_apart(metrics, Thresholds())
    assert train is not None and train.metric == "loss"


def test_the_corpus_case_is_healthy_with_no_cause():
    a = forensics.analyze(CASE)
    assert a.status == "healthy" and a.first_incident is None and not a.causes


def _few_batches(accuracy: list[float]) -> dict[str, pd.Series]:
    """intel-analytics' seven DPO lines: two ties at ln 2 (every reward 0), then five 16-pair batches."""
    index = pd.Index(np.arange(1, 8))
    loss = [LN2, LN2, 0.7058, 0.6912, 0.6958, 0.6714, 0.6773]
    margins = [0.0, 0.0, -0.024, 0.006, -0.004, 0.046, 0.034]
    return {"loss": pd.Series(loss, index), "rewards/margins": pd.Series(margins, index),
            "rewards/chosen": pd.Series([0.0, 0.0, 0.01, 0.02, 0.01, 0.05, 0.04], index),
            "rewards/accuracies": pd.Series([0.0, 0.0] + accuracy, index)}


def test_an_accuracy_rise_within_its_batch_noise_is_not_learning():
    metrics = _few_batches([0.4375, 0.625, 0.5625, 0.625, 0.6875])
    assert pairs_told_apart(metrics, Thresholds())[1] is None
    warning, = detect_no_learning_evidence(metrics, Thresholds())
    assert warning.kind == "no_learning_evidence" and "0.4375 to 0.6875" in warning.message


def test_an_accuracy_rising_at_every_batch_still_is():
    metrics = _few_batches([0.45, 0.55, 0.65, 0.75, 0.85])
    _, train = pairs_told_apart(metrics, Thresholds())
    assert train is not None and train.metric == "rewards/accuracies"


def test_the_few_batch_corpus_case_is_a_warning():
    a = forensics.analyze(FEW_BATCHES)
    assert a.status == "warning" and a.first_incident.severity == "warning"
