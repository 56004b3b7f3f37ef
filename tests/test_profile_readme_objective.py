"""A README that says in so many words that its model is trained on next-token prediction gives the objective pretrain
where nothing else in the run says one (Lukas1121_LogSentinel, JoncyKeda_LSTM_TEXT_GENERATOR, Cosmox999's GPT-2 on
WikiText-2, PiyushSaini04's Hinglish next-word model, saranscript's reformer-clm card, zmlinno_Mini-ChatGPT). A
hedged or negated phrase, one with other losses or tasks beside it, "language model" alone, and a README that names a
supervised task, a dialogue or an alignment stage say nothing; the run's own files outrank the prose."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_state_files import falling_loss_profile
from forensics.ingest.readme_objective import language_modelling_said

REALWORLD = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("text", [
    "The model is trained on normal audit log sequences using next-token prediction.\n",
    "A word-level LSTM, learning to predict the next word given a context sequence.\n",
    "# GPT-2 Fine-Tuning — Next Word Prediction\n\nThis project fine-tunes GPT-2 on a text corpus.\n",
    "This casual language model was trained from scratch on CNN/Dailymail dataset.\n",
    "A mini GPT-style language model built from scratch for learning LLM training.\n",
    "Pre-trained on Nepali text using a Causal language modeling (CLM) objective.\n",
])
def test_the_language_model_objective_in_so_many_words_is_read(text):
    assert language_modelling_said(text)


@pytest.mark.parametrize("text", [
    "A small GPT language model for text generation.\n",  # "language model" alone: an instruct model is one too
    "It is trained with next-token prediction on the assistant's answers to each instruction.\n",
    "Next-token prediction on Alpaca's instruction / response pairs, then DPO on preference pairs.\n",
    "A chatbot GPT trained by next-token prediction.\n",
    "Causal language modeling of a summarization model's targets.\n",
    "## Training\nNext-token prediction.\n\n## Data\nQuestion-answer pairs from SQuAD.\n",
])
def test_nothing_where_the_readme_names_a_supervised_task(text):
    assert language_modelling_said(text) is None


@pytest.mark.parametrize("text", [
    "The model is not trained with next-token prediction; it denoises spans.\n",  # negated
    "You can also train it with next-token prediction.\n",  # offered
    "Masked modelling compared with next-token prediction.\n",  # compared
    "The training loss includes auxiliary losses beyond next-token prediction.\n",  # other losses beside it
    "The model learns symbolic sequence tasks through causal language modeling.\n",  # tasks taught through it
    "<!-- trained with next-token prediction -->\nA GPT model.\n",  # an HTML comment
])
def test_nothing_where_the_sentence_hedges_or_adds_to_it(text):
    assert language_modelling_said(text) is None


def test_the_readme_gives_the_objective_nothing_else_says(tmp_path):
    said = falling_loss_profile(tmp_path / "a", README__md="A tiny LSTM trained on poems by next-word prediction.\n")
    assert said.objective == "pretrain", said.evidence
    assert "README.md" in said.evidence["objective"] and "next-word prediction" in said.evidence["objective"]
    assert falling_loss_profile(tmp_path / "b").objective == "unknown"


def test_the_runs_own_names_outrank_the_readme(tmp_path):
    profile = falling_loss_profile(tmp_path / "gpt2-sft-run", README__md="Trained by next-token prediction.\n")
    assert profile.objective == "sft", profile.evidence


def test_a_readme_naming_instruction_tuning_leaves_it_unknown(tmp_path):
    readme = "Next-token prediction on an instruction-tuning set of prompt / response pairs.\n"
    assert falling_loss_profile(tmp_path, README__md=readme).objective == "unknown"


@pytest.mark.parametrize("case", ["Lukas1121_LogSentinel", "JoncyKeda_LSTM_TEXT_GENERATOR",
                                  "saranscript_huggingface-models_reformer-clm",
                                  # a Trainer's card kept under another name, read as a log: 'pre-trained on nepalitext
                                  # ... using a Causal language modeling (CLM) objective'
                                  "Wenxin-Jiang_CS577-NLP_distilgpt2-nepali"])
def test_real_readmes(case):
    assert forensics.analyze(REALWORLD / case).run_profile.objective == "pretrain"


def test_a_readme_of_tasks_taught_through_the_lm_loss_says_nothing():
    # "The model learns symbolic sequence tasks through causal language modeling": copy / reverse / sort examples,
    # the loss on each one's output tokens (judged unknown)
    profile = forensics.analyze(REALWORLD / "parisainthestars_adaptive-sparse-language-model").run_profile
    assert profile.objective != "pretrain", profile.evidence
