"""Tests of loss_beyond_cross_entropy (analyzers.impossible_loss) and stuck_from_scratch (analyzers.stuck_at_guess).

Runs that never learned, called a mere warning before fx-never2.

Must be broken: a loss that never came within ten million times ln(vocabulary) of a cross-entropy
(GW-S_tranform_pytorch's character transformer: 2.99e10 at its first epoch against ln 29 = 3.37, never under 4.2e8
in 100 epochs), and a Keras model from random weights whose epoch losses never fell while its noisy held-out loss
rose over the two halves of the run though its ends agree (Asocsar_GPT2: val 186.4 -> 187.7, medians 178.1 -> 192.1).
Must stay as it was: a loss summed over a step's tokens (thousands of times ln V: a warning), a short log of such a
loss (a warning), a held-out loss flat over its halves, a Keras run from scratch that learned.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.impossible_loss import detect_loss_beyond_cross_entropy
from forensics.analyzers.stuck_at_guess import detect_stuck_from_scratch
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"


def _loss(values, start=1) -> dict:
    return {"loss": pd.Series(values, index=range(start, start + len(values)), dtype="float64")}


def test_a_loss_beyond_any_sum_at_every_point_is_a_broken_impossible_loss():
    rng = np.random.default_rng(0)
    loss = _loss(3e10 * np.exp(-np.arange(100) / 30.0) * rng.uniform(0.5, 1.5, 100))  # 3e10 -> ~1e9, never under 1e8
    (found,) = detect_loss_beyond_cross_entropy(loss, 29)
    assert (found.kind, found.severity, found.step) == ("impossible_loss", "error", 1)
    assert found.evidence["beyond_any_sum"] and "never reached a loss a working model takes" in found.message


def test_a_loss_summed_over_a_steps_tokens_stays_a_warning():
    """64 words of ~10 characters summed at about ln 29 a character: thousands of nats, not a model that is broken."""
    summed = _loss([2150.0 - 10 * i for i in range(100)])
    (found,) = detect_loss_beyond_cross_entropy(summed, 29)
    assert (found.kind, found.severity) == ("impossible_loss", "warning")
    assert "beyond_any_sum" not in found.evidence


def test_a_short_log_beyond_any_sum_stays_a_warning():
    (found,) = detect_loss_beyond_cross_entropy(_loss([3e10, 1.2e10, 3.1e10, 2.3e10]), 29)
    assert (found.kind, found.severity) == ("impossible_loss", "warning")


def test_a_held_out_loss_risen_over_its_halves_though_its_ends_agree_is_stuck_from_scratch():
    steps = range(49, 1100, 50)
    flat = [7.45 + (0.06 if i % 3 else -0.05) for i in range(len(steps))]
    metrics = {"loss": pd.Series(flat, index=steps), "epoch": pd.Series(np.linspace(0, 3, len(steps)), index=steps)}
    noisy_rise = [7.9, 7.7, 7.6, 7.8, 7.7, 8.3, 8.4, 8.2, 8.5, 7.92]  # ends 7.9 -> 7.92, halves 7.7 -> 8.3
    metrics["eval_loss"] = pd.Series(noisy_rise, index=range(100, 1100, 100))
    (found,) = detect_stuck_from_scratch(metrics, Thresholds())
    assert (found.kind, found.severity) == ("never_learned", "error")
    assert "first half" in found.message
    metrics["eval_loss"] = pd.Series([7.9, 7.7, 7.6, 7.8, 7.7, 7.75, 7.6, 7.8, 7.7, 7.92], index=range(100, 1100, 100))
    assert detect_stuck_from_scratch(metrics, Thresholds()) == []  # flat over its halves: a plateau, not this rule


def _keras_epochs(train, val) -> dict:
    """A Keras model.fit log, one line an epoch at steps 1, 2, ..., a last line cut mid-epoch with its epoch counter."""
    n = len(train)
    return {"loss": pd.Series(train, index=range(1, n + 1), dtype="float64"),
            "eval_loss": pd.Series(val, index=range(1, len(val) + 1), dtype="float64"),
            "epoch": pd.Series([n - 0.04], index=[n])}


ASOCSAR_TRAIN = [252.16, 250.45, 236.95, 236.18, 242.18, 252.64, 227.63, 228.27, 242.29, 270.21, 249.00, 247.53,
                 258.31, 257.12, 253.28, 241.51, 240.22]
ASOCSAR_VAL = [186.40, 189.26, 177.70, 209.54, 176.54, 178.55, 172.88, 170.84, 191.08, 200.48, 187.80, 193.20,
               195.59, 203.17, 189.40, 187.66]


def test_keras_epoch_lines_are_a_log_from_the_start_for_the_stuck_from_scratch_rule():
    metrics = _keras_epochs(ASOCSAR_TRAIN, ASOCSAR_VAL)
    assert detect_stuck_from_scratch(metrics, Thresholds()) == []  # its epoch counter alone starts at 16.96
    (found,) = detect_stuck_from_scratch(metrics, Thresholds(), epoch_means=True)
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 1)


def test_a_keras_model_from_scratch_that_learned_is_not_stuck():
    train = [252.0 * math.exp(-i / 6.0) + 40 for i in range(17)]
    val = [190.0 * math.exp(-i / 6.0) + 45 for i in range(16)]
    assert detect_stuck_from_scratch(_keras_epochs(train, val), Thresholds(), epoch_means=True) == []


def test_a_keras_model_from_scratch_that_fitted_its_data_while_its_held_out_loss_rose_is_not_stuck():
    """Unilmalas_TextAI's Keras LSTM: train 6.93 -> 0.005, val 7.01 -> 9.61 (an overfit, not a model that never learned)."""
    train = [6.93 * math.exp(-i / 25.0) for i in range(200)]
    val = [7.0 + 2.6 * i / 199 for i in range(200)]
    assert detect_stuck_from_scratch(_keras_epochs(train, val), Thresholds(), epoch_means=True) == []


def test_the_corpus_runs_are_broken_as_judged():
    gw = forensics.analyze(CORPUS / "GW-S_tranform_pytorch")
    assert (gw.status, gw.first_incident.kind, gw.first_incident.severity) == ("broken", "impossible_loss", "error")
    gpt2 = forensics.analyze(CORPUS / "Asocsar_GPT2")
    assert (gpt2.status, gpt2.first_incident.kind, gpt2.first_incident.step) == ("broken", "never_learned", 1)
