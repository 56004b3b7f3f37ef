"""A model size printed with its unit spelled out, `19.837954  Million parameters` (forensics/ingest/console_facts.py):
the model's size, where a part's count or prose is none.

Corpus case: Hari-Krishna-QmFuZGk_llm_mastery."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.ingest.console_facts import console_facts


CORPUS = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("line, params", [("19.837954  Million parameters", 19_837_954),
                                          ("1.2 billion params", 1_200_000_000),
                                          ("59.328 Thousand parameters", 59_328)])
def test_a_model_size_with_its_unit_spelled_out_is_the_models_size(line, params):
    assert console_facts(line + "\n")["console_params_said"] == params


def test_the_corpus_notebooks_spelled_out_size_is_its_model_params():
    profile = forensics.analyze(CORPUS / "Hari-Krishna-QmFuZGk_llm_mastery").run_profile
    assert profile.model_params == 19_837_954


@pytest.mark.parametrize("line", ["Trainable: 4.19 Million params", "we tried 5 millions params first",
                                  "about 3 Million trainable parameters"])
def test_a_spelled_out_count_of_a_part_or_prose_is_still_no_size(line):
    assert "console_params_said" not in console_facts(line + "\n")


@pytest.mark.parametrize("line", ["Falcon-7B was created using 7 billion parameters",   # rlhinrichs' markdown
                                  "a model with 100 million parameters might be slower",  # abdallaelmahdy
                                  "This model has only 19 Million parameters"])
def test_a_spelled_out_count_inside_a_sentence_is_no_size(line):
    """Prose names other models' sizes; a print puts the count first on its line, or after a short label."""
    assert "console_params_said" not in console_facts(line + "\n")


def test_a_spelled_out_count_after_a_short_label_is_the_models_size():
    assert console_facts("Model size: 1.2 billion parameters\n")["console_params_said"] == 1_200_000_000
