"""An adapter on a trained base whose first loss is at or above ~9 nats (the uniform guess over the smallest
vocabulary a language model's tokenizer has, ln 8000) and that still ends over half of that: no fine-tune that
worked, whether or not the vocabulary is known, and for a seq2seq translator's adapter as for a causal LM's (a
LoRA of a Marian en->eu model: 11.47 -> 7.24 nats, BLEU 0.05). A start near the guess that the run then leaves far
behind, a start a fine-tune has (2 nats), and a classifier's adapter are left alone."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.fine_tune_start import detect_start_near_the_guess


def _loss(first: float, last: float, n: int = 200) -> dict[str, pd.Series]:
    steps = np.arange(10, 10 * n + 1, 10)
    return {"loss": pd.Series(last + (first - last) * np.exp(-np.arange(n) / 25.0), index=steps)}


@pytest.mark.parametrize("task_type", ["SEQ_2_SEQ_LM", "CAUSAL_LM", None])
def test_an_adapter_near_any_guess_that_ends_high_is_no_learning_evidence(task_type):
    found = detect_start_near_the_guess(_loss(11.47, 7.24), "lora", None, task_type)
    assert [f.kind for f in found] == ["no_learning_evidence"]
    assert "this run's is not known" in found[0].message


def test_a_known_vocabulary_still_reads_its_own_guess_for_a_translator():
    found = detect_start_near_the_guess(_loss(9.5, 7.0), "lora", 58101, "SEQ_2_SEQ_LM")
    assert found and "ln 58101" in found[0].message


def test_a_start_near_the_guess_the_run_leaves_far_behind_is_left_alone():
    assert detect_start_near_the_guess(_loss(11.47, 0.8), "lora", None, "SEQ_2_SEQ_LM") == []


def test_a_fine_tunes_own_start_is_left_alone():
    assert detect_start_near_the_guess(_loss(2.1, 1.2), "lora", None, "CAUSAL_LM") == []


def test_a_classifiers_adapter_is_left_alone():
    assert detect_start_near_the_guess(_loss(11.47, 7.24), "lora", None, "SEQ_CLS") == []


def test_a_full_fine_tune_without_a_known_vocabulary_is_left_alone():
    assert detect_start_near_the_guess(_loss(11.47, 7.24), "full", None, "CAUSAL_LM") == []
