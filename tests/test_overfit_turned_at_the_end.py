"""Overfitting read from the last eval or two of a short log: a held-out loss that turned up by a clear margin (3%
and more than it wobbled before) after its best while the training loss kept falling, in a run past its first pass
over the data (HenryECA's Llama-3.1-8B LoRA, two evals an epoch apart: 1.4221 then 1.4870 while the epoch-mean train
loss fell 1.391 -> 1.074; Approvalize's Llama-2 LoRA: eval 0.756 down to 0.601 at step 40, then 0.630 at step 50,
the last, as the training loss fell 0.500 -> 0.449 in the fourth epoch). A last eval within the wobble healthy runs
show, one within the log's own earlier wobble, a first pass over the data, or a training loss that did not fall,
is no overfitting.

Two evals after the best that climb, the first 2% above it and the last 3%, while the training loss fell at each
logged point, are the same turn told over two evals (Anjoe's Bundestag-gpt2-large card: 2.6749 at epoch 2, then
2.7354 and 2.8236 as the training loss went 2.4421, 2.206, 1.9544); a first eval after the best within the wobble
(afletcher53's shARC: +0.43% then +4.6%, judged healthy) is not.
"""
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


# Anjoe's Bundestag-gpt2-large card: one eval and one training-loss mean an epoch
CARD_STEPS = [32852, 65704, 98556, 131408]
CARD_TRAIN = [2.7899, 2.4421, 2.206, 1.9544]
CARD_EPOCHS = [1.0, 2.0, 3.0, 4.0]


def _card(evals, train=CARD_TRAIN):
    return _metrics(evals, train=train, epochs=CARD_EPOCHS, steps=CARD_STEPS)


def test_two_evals_climbing_two_then_three_percent_over_the_best_as_the_train_loss_fell_at_each_are_overfitting():
    assert _found(_card([2.6879, 2.6749, 2.7354, 2.8236])) == [("overfitting", 98556)]


def test_a_climb_whose_first_eval_is_within_the_wobble_is_no_overfitting():
    # afletcher53's shARC (judged healthy): +0.43% then +4.6% over its best
    assert _found(_card([2.6879, 2.6749, 2.6749 * 1.0043, 2.6749 * 1.046])) == []


def test_a_climb_of_two_evals_ending_under_three_percent_is_no_overfitting():
    assert _found(_card([2.6879, 2.6749, 2.6749 * 1.021, 2.6749 * 1.028])) == []


def test_two_evals_that_do_not_climb_are_no_overfitting_unless_each_is_three_percent_up():
    assert _found(_card([2.6879, 2.6749, 2.8236, 2.7354])) == []


def test_a_climb_beside_single_training_points_that_do_not_fall_at_each_is_no_overfitting():
    assert _found(_card([2.6879, 2.6749, 2.7354, 2.8236], train=[2.7899, 2.4421, 2.4800, 2.2000])) == []


def test_the_bundestag_card_is_overfitting_from_the_first_eval_above_its_best():
    analysis = forensics.analyze(CORPUS / "Wenxin-Jiang_CS577-NLP_bundestag-gpt2-large")
    assert (analysis.status, analysis.first_incident.kind, analysis.first_incident.step) == \
        ("warning", "overfitting", 98556)


def test_a_healthy_run_whose_last_two_evals_climbed_from_within_its_wobble_stays_healthy():
    assert forensics.analyze(CORPUS / "afletcher53_shARC").status == "healthy"
