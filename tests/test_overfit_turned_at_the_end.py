"""Overfitting read from the last eval or two of a short log: a held-out loss that turned up by a clear margin (3%
and more than it wobbled before) after its best while the training loss kept falling, in a run past its first pass
over the data (HenryECA's Llama-3.1-8B LoRA, two evals an epoch apart: 1.4221 then 1.4870 while the epoch-mean train
loss fell 1.391 -> 1.074; Approvalize's Llama-2 LoRA: eval 0.756 down to 0.601 at step 40, then 0.630 at step 50,
the last, as the training loss fell 0.500 -> 0.449 in the fourth epoch). A last eval within the wobble healthy runs
show, one within the log's own earlier wobble, a first pass over the data, or a training loss that did not fall,
is no overfitting."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds

CORPUS = Path(__file__).parent / "realworld"

# Approvalize's table: eval and log every 10 steps, 16 examples a step over 180 (about 11 steps an epoch)
STEPS = [10, 20, 30, 40, 50]
EVALS = [0.755765, 0.634669, 0.605194, 0.600855, 0.630016]
TRAIN = [1.0254, 0.6564, 0.5460, 0.5001, 0.4493]
EPOCHS = [0.8, 1.6, 2.4, 3.2, 4.0]


def _metrics(evals, train=TRAIN, epochs=EPOCHS, steps=STEPS):
    return {"loss": pd.Series(train, index=steps), "eval_loss": pd.Series(evals, index=steps[:len(evals)]),
            "epoch": pd.Series(epochs, index=steps)}


def _found(metrics):
    return [(f.kind, f.step) for f in detect_overfitting(metrics, Thresholds())]


def test_a_last_eval_clearly_above_the_best_while_the_train_loss_fell_is_overfitting_from_that_eval():
    assert _found(_metrics(EVALS)) == [("overfitting", 50)]


def test_two_evals_an_epoch_apart_the_second_clearly_higher_while_the_train_loss_fell_is_overfitting():
    steps, epochs = [500, 1000, 1500], [1.0, 2.0, 3.0]
    metrics = _metrics([1.4221, 1.4870], train=[1.3914, 1.0735, 0.7150], epochs=epochs, steps=steps)
    assert _found(metrics) == [("overfitting", 1000)]


def test_a_last_eval_within_the_wobble_of_healthy_runs_is_no_overfitting():
    # Thanh097698's chatbot turned up 1.3% at its last evals, Ishihara-Masabumi's Llama SFT 0.8%: judged healthy
    assert _found(_metrics(EVALS[:4] + [0.6009 * 1.02])) == []


def test_a_last_rise_no_larger_than_the_log_wobbled_before_is_no_overfitting():
    wobbly = [0.7558, 0.6347, 0.6700, 0.6009, 0.6300]  # +5.6% above its best so far at step 30, before the best
    assert _found(_metrics(wobbly)) == []


def test_a_rise_in_the_first_pass_over_the_data_is_no_overfitting():
    # taehyun-me's one-epoch run: its last eval 12% above the best at epoch 0.98, judged healthy
    assert _found(_metrics(EVALS, epochs=[0.2, 0.4, 0.6, 0.8, 0.98])) == []


def test_a_rise_while_the_training_loss_did_not_fall_is_no_overfitting():
    assert _found(_metrics(EVALS, train=[1.0254, 0.6564, 0.5460, 0.5001, 0.4990])) == []


@pytest.mark.parametrize("case, step", [("HenryECA_NLPII_Proyect", 1000), ("Approvalize_finetuned-LLama2", 50)])
def test_the_corpus_runs_whose_last_eval_turned_up_are_overfitting(case, step):
    analysis = forensics.analyze(CORPUS / case)
    assert analysis.status == "warning"
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("overfitting", step)


@pytest.mark.parametrize("case", ["Ishihara-Masabumi_Llama_SFT", "cyanisthecolor_Contradicting-Preference",
                                  "taehyun-me_NLP-2025-project"])
def test_healthy_corpus_runs_whose_last_eval_rose_a_little_stay_healthy(case):
    assert forensics.analyze(CORPUS / case).status == "healthy"
