"""Tests of a run's first points (analyzers.fine_tune_start's start above the guess, analyzers.loss_spike's
baseline) and of a training loss at zero before the eval loss turned (analyzers.overfitting.fold_memorization).

Batch AS60's misses (tests/realworld/PROVENANCE.md): a lone first loss at a pretrained base's uniform guess, a
training loss at ~0 before the eval loss turned, a first print that is one loss over the print window (the
notebook-code readings of the same batch: tests/test_notebook_code_dtype_and_machine.py).

bmcmahan2016_cs-269-SLG: t5-base in a plain fp32 loop, 10.47 at batch 0 (ln 32128 = 10.38), then 2.70.
hyeonggeonkim-berkeley_mids-w266-fall2025-vishnu-geon: train 0.0009 from the final run's first eval, the eval loss
above that first eval from the second on. gracemyqiao_fine-tuned_flanT5_on_slot_filling_task: 0.032 at step 0 (one
loss / 150), then 150-step means 2.17 -> 0.12.
"""
from __future__ import annotations

import math

import pandas as pd

from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.analyzers.loss_spike import detect_loss_spikes
from forensics.analyzers.overfitting import fold_memorization
from forensics.config import Thresholds
from forensics.findings import Finding

TH = Thresholds()
T5 = 32128


def _loss(values: dict) -> dict:
    return {"loss": pd.Series(values, dtype="float64")}


def _print_ordinals(values: list[float]) -> dict:
    return _loss(dict(zip(range(1, len(values) + 1), values)))


# bmcmahan2016's prints: batch 0, then every 500 batches (numbered by their order)
AT_THE_GUESS = [10.47, 2.70, 2.49, 4.97, 3.1, 2.2, 1.9, 1.6, 1.5, 1.4, 1.5, 1.2, 0.9, 0.8, 0.7, 0.7, 0.6, 0.75]


def test_a_lone_first_loss_at_a_pretrained_bases_guess_is_no_blip():
    found = detect_start_above_uniform_guess(_print_ordinals(AT_THE_GUESS), TH, "full", T5,
                                             pretrained_base="t5-base", fine_tune=True)
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 1)]
    assert "far worse" not in found[0].message  # 1.009x the guess: worse than chance, not far worse


def test_a_lone_first_step_far_beyond_any_guess_that_is_gone_at_once_is_still_a_blip():
    """ms-swift's first step at 20.5 (1.7x ln 151936), 3.95 nine steps later (tests/test_fine_tune_start.py's BLIP):
    no weights score that; a start-up glitch, excused where the run then learned."""
    glitch = [1.75 * math.log(T5)] + AT_THE_GUESS[1:]
    assert detect_start_above_uniform_guess(_print_ordinals(glitch), TH, "full", T5,
                                            pretrained_base="t5-base", fine_tune=True) == []
    ordinary = [3.2] + AT_THE_GUESS[1:]
    assert detect_start_above_uniform_guess(_print_ordinals(ordinary), TH, "full", T5,
                                            pretrained_base="t5-base", fine_tune=True) == []


def _findings(memorized_at: int, turned_at: int, best_at: int = 134) -> list[Finding]:
    over = Finding("overfitting", "warning", turned_at, f"eval_loss is lowest at step {best_at} and rises.",
                   metric="eval_loss", evidence={"best_step": best_at})
    memo = Finding("memorization", "warning", memorized_at, "loss descends to 0.0009: learned by heart.",
                   metric="loss", evidence={"value": 0.0009})
    return [over, memo]


def test_a_training_loss_at_zero_before_the_eval_loss_turned_is_memorization():
    (found,) = fold_memorization(_findings(memorized_at=134, turned_at=268))
    assert (found.kind, found.step) == ("memorization", 134)
    assert "the eval loss rose from step 268" in found.message and found.evidence["overfitting_step"] == 268


def test_a_training_loss_reaching_zero_after_the_best_eval_stays_overfitting():
    """Near 0 only after the eval loss's best (tests/test_analyzers.py's memorized run: best eval at 1000, train
    ~0 from 1745, the rise seen at 2000): the held-out loss may have turned first; overfitting, as before."""
    (found,) = fold_memorization(_findings(memorized_at=900, turned_at=268))
    assert (found.kind, found.step) == ("overfitting", 268) and found.evidence["memorization_step"] == 900
    (found,) = fold_memorization(_findings(memorized_at=1745, turned_at=2000, best_at=1000))
    assert (found.kind, found.step) == ("overfitting", 2000)


# gracemyqiao's prints: log_loss / 150 at idx 0 (one loss), then means of 150 steps
FIRST_PRINT_OVER_THE_WINDOW = [0.0324, 2.17, 0.81, 0.53, 0.49, 0.45, 0.36, 0.31, 0.28, 0.25, 0.22, 0.2, 0.19,
                               0.18, 0.17, 0.16, 0.15, 0.14, 0.135, 0.13, 0.125, 0.12, 0.13, 0.12, 0.122, 0.121]


def test_a_first_print_far_under_everything_after_it_is_no_spikes_baseline():
    steps = [150 * i for i in range(len(FIRST_PRINT_OVER_THE_WINDOW))]
    metrics = _loss(dict(zip(steps, FIRST_PRINT_OVER_THE_WINDOW)))
    assert detect_loss_spikes(metrics, TH) == []


def test_an_early_jump_that_stays_up_or_falls_back_near_the_start_is_still_a_spike():
    stays_up = [2.0, 9.0, 9.5, 9.8, 10.1, 10.0, 9.9, 10.2, 10.1, 10.0, 9.8, 9.9]
    assert [f.kind for f in detect_loss_spikes(_loss(dict(enumerate(stays_up))), TH)] == ["loss_spike"]
    back_near_the_start = [2.0, 9.0, 6.0, 3.0, 2.5, 2.2, 2.1, 2.0, 1.9, 1.9, 1.8, 1.8]
    assert [f.kind for f in detect_loss_spikes(_loss(dict(enumerate(back_near_the_start))), TH)] == ["loss_spike"]
