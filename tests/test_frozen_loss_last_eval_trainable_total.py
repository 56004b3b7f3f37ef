"""Tests of frozen_loss, overfitting on one last eval, held-out learning evidence and a `Trainable | total` banner.

Corpus batch AS66 found wrong: a frozen loss (the same logged mean at every window, the eval loss still to its fifth
decimal) read as a noisy flat one (amordo_Iris), one last eval over the best against single batches' losses read as
overfitting and an eval loss 8-11% under its first read as no learning (soureeshdalal_finetuned-phi2), and the
owner's `Trainable: N | total: M` print passed over for the size in the model's name (the Gemma recipe notebooks)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.held_out_fall import held_out_fell
from forensics.analyzers.frozen_loss import detect_frozen_loss
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds
from forensics.ingest.banners import find_banners

CORPUS = Path(__file__).parent / "realworld"
_STEPS = (200, 400, 600, 800, 1000)


def _series(values, steps=_STEPS):
    return pd.Series(dict(zip(steps, values)), dtype="float64")


# --- a frozen loss ---------------------------------------------------------------------------------------------------

def _frozen_kinds(train, evals):
    metrics = {"loss": _series(train), "eval_loss": _series(evals), "epoch": _series([0.09, 0.18, 0.27, 0.36, 0.45])}
    return [f.kind for f in detect_frozen_loss(metrics, Thresholds())]


def test_a_mean_loss_repeated_exactly_beside_a_still_eval_loss_is_no_learning_signal():
    kinds = _frozen_kinds([1.577] * 5, [1.577014, 1.577006, 1.577004, 1.577003, 1.577002])
    assert kinds == ["no_learning_signal"]


def test_a_loss_repeated_by_its_rounding_beside_an_eval_loss_that_moves_is_no_frozen_loss():
    assert _frozen_kinds([1.58] * 5, [1.62, 1.60, 1.59, 1.585, 1.583]) == []


def test_a_still_eval_loss_beside_a_training_loss_that_moves_is_no_frozen_loss():
    assert _frozen_kinds([1.577, 1.5762, 1.5771, 1.5768, 1.5765], [1.577014, 1.577006, 1.577004, 1.577003, 1.577002]) == []


def test_the_frozen_finetome_qlora_is_broken_from_its_first_point():
    analysis = forensics.analyze(CORPUS / "amordo_Iris")
    assert (analysis.status, analysis.first_incident.kind, analysis.first_incident.step) == \
        ("broken", "no_learning_signal", 200)
    assert "grad_norm exactly 0" not in " ".join(e for c in analysis.causes for e in c.evidence)


# --- one last eval above the best, against single batches' losses ----------------------------------------------------

_PHI2_STEPS = (36, 72, 108, 144, 180)
_PHI2_EVALS = [0.741288, 0.67813, 0.674724, 0.657462, 0.68032]


def _phi2_metrics(train):
    return {"loss": _series(train, _PHI2_STEPS), "eval_loss": _series(_PHI2_EVALS, _PHI2_STEPS),
            "epoch": _series([0.4, 0.8, 1.2, 1.6, 2.0], _PHI2_STEPS)}


def test_one_last_eval_above_the_best_against_wobbling_single_batch_losses_is_no_overfitting():
    metrics = _phi2_metrics([0.6093, 0.8043, 0.9194, 0.7057, 0.4706])
    assert detect_overfitting(metrics, Thresholds()) == []


def test_the_same_eval_against_a_training_loss_falling_at_each_point_is_overfitting():
    metrics = _phi2_metrics([1.0254, 0.6564, 0.546, 0.5001, 0.4493])
    assert [f.kind for f in detect_overfitting(metrics, Thresholds())] == ["overfitting"]


def test_an_eval_loss_under_its_first_at_every_later_evaluation_shows_learning():
    assert held_out_fell(_series(_PHI2_EVALS, _PHI2_STEPS))
    assert not held_out_fell(_series([1.283, 1.282, 1.284, 1.281, 1.281], _PHI2_STEPS))  # a fixed set, not learning


def test_no_learning_evidence_does_not_say_no_eval_loss_fell_where_one_fell():
    metrics = {"loss": _series([1.275, 1.262, 1.281, 1.255, 1.27]), "eval_loss": _series([1.283, 1.281, 1.282],
                                                                                          _STEPS[::2])}
    message = detect_no_learning_evidence(metrics, Thresholds())[0].message
    assert "no eval loss fell" not in message and "1.283 -> 1.282" in message


def test_the_phi2_mbpp_qlora_is_healthy_and_the_llama2_one_still_overfits():
    assert forensics.analyze(CORPUS / "soureeshdalal_finetuned-phi2").status == "healthy"
    first = forensics.analyze(CORPUS / "Approvalize_finetuned-LLama2").first_incident
    assert (first.kind, first.step) == ("overfitting", 50)


# --- the owner's `Trainable: N | total: M` ---------------------------------------------------------------------------

def test_the_trainable_total_print_is_read_as_a_count_banner():
    banner = find_banners(["Trainable: 78446592 | total: 2584619008 | Percentage: 3.0351%"])[0]
    assert (banner.trainable_params, banner.all_params) == (78446592, 2584619008)


def test_a_printed_total_beats_the_size_in_the_model_name():
    for case, total in (("akarshan-kumar_LLM_FineTunning", 2584619008), ("avijit2005in_finetune_LLM", 8737696768)):
        assert forensics.analyze(CORPUS / case).run_profile.to_dict()["model_params"] == total
