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
