"""Memorization of a from-scratch run (forensics/analyzers/memorization.py) beside a held-out score: a BLEU still
rising to the end keeps the run healthy.

From corpus batch AS70: a from-scratch translator whose held-out BLEU still rose to the end (ofrik_Seq2Seq)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics


CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float, end: float, scale: float) -> list[float]:
    return [end + (start - end) * math.exp(-i / scale) for i in range(n)]


# --- TensorBoard's scalar export ------------------------------------------------------------------------------------

def _export(path: Path, steps, values) -> None:
    path.write_text("Wall time,Step,Value\n" + "".join(f"{1.5e9 + s},{s},{v}\n" for s, v in zip(steps, values)))


# --- a held-out score still rising: no memorization from the training loss alone ---------------------------------------

def _from_scratch_translator(folder: Path, bleu: list[float] | None) -> forensics.Analysis:
    """A seq2seq model from random weights (first loss about ln 54k) trained to 0.1 nats, with no eval loss."""
    loss = _falling(400, 10.9, 0.1, 60)
    _export(folder / "train_loss.csv", [18 + 50 * i for i in range(len(loss))], loss)
    if bleu is not None:
        _export(folder / "validation_bleu.csv", [500 * i for i in range(len(bleu))], bleu)
    return forensics.analyze(folder)


def test_a_held_out_bleu_rising_to_the_end_keeps_a_from_scratch_run_healthy(tmp_path):
    a = _from_scratch_translator(tmp_path, [0.11 * (1 - math.exp(-i / 15)) for i in range(40)])
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")
    assert a.status == "healthy"


@pytest.mark.parametrize("bleu", [None, [0.11 * math.exp(-((i - 10) / 8) ** 2) for i in range(40)]],
                         ids=["no held-out score", "bleu peaked early and fell"])
def test_without_a_rising_held_out_score_a_from_scratch_run_under_half_a_nat_is_memorization(tmp_path, bleu):
    a = _from_scratch_translator(tmp_path, bleu)
    assert a.status == "warning" and a.first_incident.kind == "memorization"


def test_the_real_seq2seq_export_is_healthy_on_its_rising_bleu():
    a = forensics.analyze(CORPUS / "ofrik_Seq2Seq")
    assert a.status == "healthy" and a.run_profile.method == "full"


# --- a short log: a held-out score higher at every one of its evaluations ------------------------------------------

_ASYMMETRIC_LOSS = [0.00765, 0.00127, 0.000926, 0.00077, 0.000656, 0.000567]  # a per-label loss, small from epoch 1


def _multi_label_classifier(folder: Path, f1: list[float]) -> forensics.Analysis:
    """An epoch log of a multi-label classifier fine-tuned six epochs (ARUNRG3005's shape): the train loss and the
    held-out F1 tuned each epoch, no held-out loss."""
    rows = "".join(f"{i},{loss},{score}\n" for i, (loss, score) in enumerate(zip(_ASYMMETRIC_LOSS, f1), 1))
    (folder / "logs").mkdir()
    (folder / "logs" / "training_log.csv").write_text("epoch,train_loss,val_f1\n" + rows)
    return forensics.analyze(folder)


_F1_EACH_EPOCH = {"higher at every epoch": ([0.550, 0.719, 0.755, 0.775, 0.791, 0.792], ("healthy", None)),
                  "fell at the end": ([0.550, 0.719, 0.755, 0.775, 0.760, 0.741], ("warning", "memorization")),
                  "flat at one epoch": ([0.550, 0.719, 0.755, 0.755, 0.791, 0.792], ("warning", "memorization")),
                  # higher each epoch by a hair, 0.7910 -> 0.7917 over six: noise on a held-out set, no improvement
                  "higher by noise only": ([0.7910, 0.7912, 0.7913, 0.7915, 0.7916, 0.7917],
                                           ("warning", "memorization")),
                  # guard: a real rise that is small against the score's level, 0.800 -> 0.842 (5.25%), still vetoes
                  "higher by 5% of its first": ([0.800, 0.815, 0.826, 0.834, 0.839, 0.842], ("healthy", None))}


@pytest.mark.parametrize("f1, judged", list(_F1_EACH_EPOCH.values()), ids=list(_F1_EACH_EPOCH))
def test_only_a_held_out_f1_higher_at_every_epoch_vetoes_memorization_of_a_small_scale_loss(tmp_path, f1, judged):
    a = _multi_label_classifier(tmp_path, f1)
    assert (a.status, a.first_incident and a.first_incident.kind) == judged


@pytest.mark.parametrize("case, judged", [
    ("ARUNRG3005_Context-Aware-Hashtag-Generation", ("healthy", None)),  # val F1 0.550 -> 0.792, higher every epoch
    # guard: dev accuracy best 0.902 at epoch 5 of 10, then 0.865, 0.849, 0.861, 0.886 (its quarters' medians still
    # read as rising) while the training loss falls to 0.015 - no veto
    ("silin3_CS224n_final_project", ("warning", "memorization"))])
def test_the_real_classifiers_memorization_is_vetoed_only_by_a_score_higher_at_every_eval(case, judged):
    a = forensics.analyze(CORPUS / case)
    assert (a.status, a.first_incident and a.first_incident.kind) == judged
