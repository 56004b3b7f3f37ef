"""A README that says in so many words that its model was trained from scratch gives the method full where nothing
else in the run says one (biyamuslim_ML-Based-Python-Code-Summarizer, LZHMS_TransformerPractice): random weights are
trained whole. The Trainer's own card sentence "This model was trained from scratch on ..." (written wherever it does
not know the base: Seanaaa0_GPT-CoT is a QLoRA), code written from scratch, and a README naming an adapter say
nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_state_files import _analyze, _trainer_state, falling_loss_profile
from forensics.ingest.readme_scratch import trained_from_scratch

REALWORLD = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("text", [
    "The model is trained from scratch and does not use a pretrained full language model.\n",
    "I provide the training setup file to train model from scratch. Just use the command to start:\n",
    "```bash\n# Start training from scratch\npython train.py\n```\n",
    "A 20M model pre-trained from scratch on TinyStories.\n",
    # a fine-tune denied, the weights (not the tokenizer) trained from scratch: netra-ai-lab_Netra-NMT's lines
    "It is *not* a fine-tune of NLLB — the architecture and\ntokenizer are custom and the weights are trained from "
    "scratch.\n",
])
def test_a_model_trained_from_scratch_in_so_many_words_is_read(text):
    assert trained_from_scratch(text)


@pytest.mark.parametrize("text", [
    "## Model description\n\nThis model was trained from scratch on the None dataset.\n",  # the Trainer's card
    "Everything (model, tokenizer, training loop) implemented from scratch in PyTorch.\n",
    "I wrote the training code from scratch.\n",
    "Pre-trained from scratch, then tuned with LoRA on instructions.\n",  # an adapter named
    "<!-- trained from scratch -->\nFine-tuned GPT-2.\n",
    "# My model\nFine-tuned from gpt2 for 3 epochs.\n",
])
def test_no_from_scratch_where_the_readme_does_not_say_the_weights_were(text):
    assert trained_from_scratch(text) is None


@pytest.mark.parametrize("text", [
    "You can train from scratch with --init scratch, or fine-tune a checkpoint (default).\n",  # an option
    "The model is not trained from scratch; we start from bert-base.\n",  # negated
    "The tokenizer was trained from scratch; we fine-tune Llama-2 on it.\n",  # a part, and a fine-tune
    "The tokenizer was trained from scratch on the corpus.\n",  # a part of the model, not its weights
    "Only the classification head is trained from scratch.\n",
    "Instead of training from scratch, we adapt GPT-2.\n",
    "We adapt GPT-2 rather than train from scratch.\n",
    "There is no need to train from scratch.\n",
    "Far cheaper than training from scratch.\n",
    "Training from scratch vs. adapting GPT-2: a comparison.\n",
    "A 20M GPT trained from scratch.\n\nContinued pre-training of it on code.\n",  # a trained start named
])
def test_no_from_scratch_where_the_sentence_negates_compares_or_offers_it(text):
    assert trained_from_scratch(text) is None


def test_a_card_naming_its_base_keeps_the_fine_tuning_rates(tmp_path):
    # review 31's repro: a continued pre-training card that says "far cheaper than training from scratch" took
    # lr_too_high away from a Llama-2 run diverging at 3e-4
    card = ("---\nbase_model: meta-llama/Llama-2-7b-hf\n---\nContinued pre-training of Llama-2 on legal text "
            "(far cheaper than training from scratch).\n")
    analysis = _diverging_at_3e_4(tmp_path / "run", README__md=card)
    assert not analysis.run_profile.from_random_weights
    assert "lr_too_high" in [c.cause for c in analysis.causes]


def test_a_trained_start_in_the_runs_files_outranks_the_readme(tmp_path):
    profile = falling_loss_profile(tmp_path / "args", README__md="A tiny LM trained from scratch on my corpus.\n",
                                   training_args__yaml="model_name_or_path: gpt2\nlearning_rate: 0.0001\n")
    assert not profile.from_random_weights, profile.evidence
    saved = falling_loss_profile(tmp_path / "saved", README__md="A tiny LM trained from scratch on my corpus.\n",
                                 config__json='{"_name_or_path": "gpt2", "vocab_size": 50257}')  # first loss 2.0
    assert saved.method == "full" and not saved.from_random_weights, saved.evidence


def test_the_readme_gives_the_method_nothing_else_says(tmp_path):
    profile = falling_loss_profile(tmp_path, README__md="# Summarizer\nThe model is trained from scratch on CPU.\n")
    assert profile.method == "full", profile.evidence
    assert "README.md" in profile.evidence["method"] and "trained from scratch" in profile.evidence["method"]


def test_no_readme_no_method(tmp_path):
    assert falling_loss_profile(tmp_path).method == "unknown"


def test_the_runs_names_outrank_the_readme(tmp_path):
    profile = falling_loss_profile(tmp_path / "gpt2-lora-run", README__md="Trained from scratch on my data.\n")
    assert profile.method == "lora", profile.evidence


@pytest.mark.parametrize("case, method", [("biyamuslim_ML-Based-Python-Code-Summarizer", "full"),
                                          ("netra-ai-lab_Netra-NMT", "full"),
                                          ("LZHMS_TransformerPractice", "full"), ("Seanaaa0_GPT-CoT", "qlora")])
def test_real_readmes(case, method):
    assert forensics.analyze(REALWORLD / case).run_profile.method == method


def test_a_readme_from_scratch_marks_the_weights_random(tmp_path):
    said = falling_loss_profile(tmp_path / "a", README__md="The model is trained from scratch on CPU.\n")
    assert said.from_random_weights and said.to_dict()["from_random_weights"] is True
    assert not falling_loss_profile(tmp_path / "b").from_random_weights
    adapter = falling_loss_profile(tmp_path / "gpt2-lora-run", README__md="Trained from scratch.\n")
    assert not adapter.from_random_weights


def _diverging_at_3e_4(folder, **files):
    """Twelve Trainer rows at a constant 3e-4 whose loss doubles from the sixth on: broken, its rate in question."""
    rows = [{"step": 10 * (i + 1), "epoch": 0.1 * (i + 1), "loss": 3.0 if i < 5 else 3.0 * 2 ** (i - 4),
             "learning_rate": 3e-4, "grad_norm": 1.0 + i} for i in range(12)]
    return _analyze(_trainer_state(folder, rows, **files))


def test_a_model_trained_from_scratch_is_not_held_to_fine_tuning_rates(tmp_path):
    # 3e-4 is over full fine-tuning's ceiling, inside pre-training's: a README that says the weights started random
    # takes the fine-tuning judgement away (ruapotato_NullRoot was told "too high for full fine-tuning")
    unsaid = _diverging_at_3e_4(tmp_path / "a")
    assert "lr_too_high" in [c.cause for c in unsaid.causes]
    said = _diverging_at_3e_4(tmp_path / "b", README__md="A tiny LM trained from scratch on my corpus.\n")
    assert said.status == "broken" and "lr_too_high" not in [c.cause for c in said.causes]
    assert not [c for c in forensics.analyze(REALWORLD / "ruapotato_NullRoot").causes if c.cause == "lr_too_high"]
