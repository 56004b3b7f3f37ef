"""A held-out loss a little above its best while the held-out accuracy beside it keeps improving
(analyzers.overfit_accuracy `accuracy_kept_improving`).

avinash7055's OpenNMT-py transliteration Transformer (label smoothing 0.1, judged healthy): validation xent lowest
1.1195 at step 13,000, then 1.12-1.138 to step 30,000 (+1.7% at most) while validation accuracy went 92.01 (13k) ->
92.44 (26k) -> 92.38 (30k): the predictions got better while the cross-entropy of them rose a little (more confident
ones), so the step-13,000 checkpoint does not generalise best. A larger rise (Kabeermd's LSTM LM: +4.5% beside an
accuracy at its best), an accuracy that did not improve, or a generation score in place of an accuracy
(Wenxin-Jiang's bert2bert: +1.1% beside ROUGE at its best) stays overfitting: those were judged so.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers import analyze_metrics
from forensics.config import Thresholds

CORPUS = Path(__file__).resolve().parent / "realworld"
TH = Thresholds()

# avinash7055's validation blocks, every 1,000 steps
EVAL_STEPS = np.arange(1000, 30001, 1000)
XENT = [1.741077, 1.280528, 1.222012, 1.187294, 1.166850, 1.150024, 1.144353, 1.136101, 1.126458, 1.127414,
        1.125757, 1.121244, 1.119506, 1.123887, 1.122397, 1.120895, 1.122586, 1.125345, 1.121896, 1.130201,
        1.125426, 1.128446, 1.128582, 1.130637, 1.132888, 1.132360, 1.135760, 1.131196, 1.136874, 1.138381]
ACCURACY = [71.0476, 85.9358, 87.9226, 89.1172, 89.7493, 90.5346, 90.8294, 90.9988, 91.4886, 91.6650, 91.7106,
            91.7733, 92.0101, 91.9814, 92.1168, 92.2236, 92.1617, 92.1996, 92.3110, 92.3126, 92.3072, 92.3350,
            92.3358, 92.3087, 92.3280, 92.4433, 92.3141, 92.4286, 92.3242, 92.3822]
TRAIN_STEPS = np.arange(100, 30001, 100)
TRAIN = np.concatenate([np.linspace(5.3, 1.0, 130), np.linspace(1.0, 0.9, 170)]) + 0.02 * np.sin(np.arange(300))


def _overfitting(evals, accuracy=None, name="eval_accuracy_pct"):
    m = {"loss": pd.Series(TRAIN, index=TRAIN_STEPS),
         "eval_loss": pd.Series(np.asarray(evals, dtype="float64"), index=EVAL_STEPS)}
    if accuracy is not None:
        m[name] = pd.Series(np.asarray(accuracy, dtype="float64"), index=EVAL_STEPS)
    return [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


def test_the_rise_alone_is_told_as_overfitting():
    (f,) = _overfitting(XENT)
    assert f.evidence["best_step"] == 13000


def test_a_small_rise_beside_a_held_out_accuracy_that_kept_improving_is_not_overfitting():
    assert not _overfitting(XENT, ACCURACY)


def test_the_same_rise_beside_an_accuracy_that_fell_after_the_best_is_overfitting():
    fell = ACCURACY[:13] + [92.0101 - 0.02 * i for i in range(1, 18)]
    assert len(_overfitting(XENT, fell)) == 1


def test_an_accuracy_that_rose_but_ends_under_its_level_at_the_best_is_overfitting():
    back = ACCURACY[:-1] + [91.9]  # a new best at 26,000, but the last checkpoint scores under the one at 13,000
    assert len(_overfitting(XENT, back)) == 1


def test_a_larger_rise_beside_an_improving_accuracy_is_overfitting():
    larger = XENT[:13] + [1.119506 + (x - 1.119506) * 3 for x in XENT[13:]]  # up to +5%
    assert len(_overfitting(larger, ACCURACY)) == 1


def test_a_generation_score_is_no_accuracy():
    assert len(_overfitting(XENT, ACCURACY, name="eval_bleu")) == 1


def test_a_training_accuracy_is_no_held_out_one():
    assert len(_overfitting(XENT, ACCURACY, name="accuracy")) == 1


# --- the accuracy must be measured on the eval loss's own held-out set, at its evaluations ---------------------------

def _overfitting_beside(accuracies: dict[str, tuple]) -> list:
    """The overfitting findings of the rise beside accuracies {name: (values, steps)}."""
    m = {"loss": pd.Series(TRAIN, index=TRAIN_STEPS),
         "eval_loss": pd.Series(np.asarray(XENT, dtype="float64"), index=EVAL_STEPS)}
    m.update({name: pd.Series(np.asarray(v, dtype="float64"), index=s) for name, (v, s) in accuracies.items()})
    return [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


_FLAT = [ACCURACY[12]] * 30  # the validation accuracy stalled at its level at the eval loss's best


def test_a_test_splits_accuracy_beside_the_validation_splits_does_not_excuse_its_rise():
    # eval_loss is the validation split's (val_loss, validation_loss and eval_loss read as one name): a test split's
    # accuracy improving says nothing of it, where the validation split's own accuracy stalled
    beside = {"eval_accuracy": (_FLAT, EVAL_STEPS), "test_accuracy": (ACCURACY, EVAL_STEPS)}
    assert len(_overfitting_beside(beside)) == 1


def test_a_test_splits_accuracy_alone_does_not_excuse_the_validation_loss_rise():
    assert len(_overfitting_beside({"test_accuracy": (ACCURACY, EVAL_STEPS)})) == 1


def test_an_accuracy_dated_at_other_steps_than_the_eval_loss_does_not_excuse_its_rise():
    # scored at its own evaluations (every 1,000 steps from 1,500): not the checkpoints the eval loss measured
    assert len(_overfitting_beside({"eval_accuracy": (ACCURACY, EVAL_STEPS + 500)})) == 1


def test_a_keras_val_accuracy_beside_the_val_loss_still_excuses_it():
    # Keras' val_loss reads as eval_loss, its val_accuracy keeps its name: the same held-out set, the same epochs
    assert not _overfitting_beside({"val_accuracy": (ACCURACY, EVAL_STEPS)})


def _findings(case):
    return forensics.analyze(CORPUS / case).findings


def test_avinash7055s_transliteration_is_healthy():
    a = forensics.analyze(CORPUS / "avinash7055_devnagri-transliteration")
    assert a.status == "healthy" and not [f for f in a.findings if f.kind == "overfitting"]


def test_judged_overfitting_runs_beside_an_improving_score_stay_overfitting():
    for case in ("Kabeermd_deep-learning-nlp-models", "Wenxin-Jiang_CS577-NLP_bert2bert-bbc", "ChuaShiYing_AI_",
                 "evilc3_marian_mt_train"):
        assert any(f.kind == "overfitting" for f in _findings(case)), case
