"""The run profile from the model card transformers wrote (`ingest.trainer_card`, `profile.trainer_card`): method full
for a Keras callback's card or a Trainer's card of a release before PEFT existed, naming no adapter; objective sft for
an encoder-decoder fine-tuned on its targets, pretrain for a causal LM on a raw-text corpus the card names. Real cards
from the AS85 / AS86 batches (saranscript_huggingface-models_*, Wenxin-Jiang_CS577-NLP_*); the hand-made cards copy
their shape."""
from __future__ import annotations

from pathlib import Path

import forensics

CORPUS = Path(__file__).parent / "realworld"

TABLE = """### Training results

| Training Loss | Epoch | Step | Validation Loss |
|:-------------:|:-----:|:----:|:---------------:|
| 2.6167        | 1.0   | 100  | 2.8649          |
| 2.4551        | 2.0   | 200  | 2.7810          |
| 2.3723        | 3.0   | 300  | 2.7369          |
| 2.3373        | 4.0   | 400  | 2.7086          |
"""


def _card(tmp_path, header: str, prose: str, version: str = "4.12.5", extra: str = "") -> Path:
    text = (f"---\n{header}---\n\n# run\n\n{prose}\n\n## Training procedure\n\n### Training hyperparameters\n\n"
            f"- learning_rate: 0.0001\n\n{TABLE}\n\n### Framework versions\n\n{extra}- Transformers {version}\n"
            "- Pytorch 1.10.0+cu111\n")
    (tmp_path / "README.md").write_text(text)
    return tmp_path


_SEQ2SEQ_HEADER = """tags:
- generated_from_trainer
model-index:
- name: t5-small-finetuned-ro-to-en
  results:
  - task:
      name: Sequence-to-sequence Language Modeling
      type: text2text-generation
    dataset:
      name: wmt16
      type: wmt16
"""
_BART = "This model is a fine-tuned version of [facebook/bart-large](https://huggingface.co/facebook/bart-large)"
_T5 = "This model is a fine-tuned version of [t5-small](https://huggingface.co/t5-small) on the wmt16 dataset."


def _profile(folder):
    return forensics.analyze(folder).run_profile


def test_a_pre_peft_trainer_card_of_a_seq2seq_fine_tune_says_full_and_sft(tmp_path):
    profile = _profile(_card(tmp_path, _SEQ2SEQ_HEADER, _T5))
    assert (profile.method, profile.objective) == ("full", "sft")
    assert "Transformers 4.12.5" in profile.evidence["method"]
    assert "text2text-generation" in profile.evidence["objective"]


def test_a_keras_callback_card_of_a_bart_fine_tune_says_full_and_sft(tmp_path):
    header = "tags:\n- generated_from_keras_callback\nmodel-index:\n- name: tiny-bart\n  results: []\n"
    profile = _profile(_card(tmp_path, header, _BART + " on an unknown dataset.", version="4.27.3",
                             extra="- TensorFlow 2.11.0\n"))
    assert (profile.method, profile.objective) == ("full", "sft")
    assert "Keras" in profile.evidence["method"]


def test_a_causal_lm_card_on_a_raw_text_corpus_says_pretrain(tmp_path):
    header = "tags:\n- generated_from_trainer\nmodel-index:\n- name: gpt2-wikitext2\n  results: []\n"
    prose = "This model is a fine-tuned version of [gpt2](https://huggingface.co/gpt2) on an unknown dataset."
    profile = _profile(_card(tmp_path, header, prose, version="4.20.1"))
    assert (profile.method, profile.objective) == ("full", "pretrain")


def test_a_trainer_card_of_the_peft_era_without_a_peft_line_is_no_evidence_of_full(tmp_path):
    # from 4.27 to 4.35 the Trainer wrote its card over the one PEFT had marked: no PEFT line proves nothing
    profile = _profile(_card(tmp_path, _SEQ2SEQ_HEADER, _T5, version="4.34.1"))
    assert profile.method == "unknown"
    assert profile.objective == "sft"  # (what the model is, the task and checkpoint say in any release)


def test_a_pre_peft_card_that_names_an_adapter_is_no_evidence_of_full(tmp_path):
    header = "library_name: peft\n" + _SEQ2SEQ_HEADER
    profile = _profile(_card(tmp_path, header, _T5, extra="- PEFT 0.4.0\n"))
    assert profile.method != "full"


def test_a_classifier_card_gets_no_objective_from_its_checkpoint(tmp_path):
    header = ("tags:\n- generated_from_trainer\nmodel-index:\n- name: bart-large-finetuned-qqp\n  results:\n"
              "  - task:\n      name: Text Classification\n      type: text-classification\n")
    profile = _profile(_card(tmp_path, header, _BART + " on the glue dataset."))
    assert profile.method == "full"
    assert profile.objective == "unknown"


def test_a_card_of_a_model_trained_from_scratch_gets_no_fine_tune_objective(tmp_path):
    header = _SEQ2SEQ_HEADER
    profile = _profile(_card(tmp_path, header, "This model was trained from scratch on the wmt16 dataset."))
    assert profile.objective == "unknown"


def test_real_cards_of_the_as85_and_as86_batches():
    for case, expected in (("saranscript_huggingface-models_t5-ro-en", ("full", "sft")),
                           ("Wenxin-Jiang_CS577-NLP_literature-summarizer", ("full", "sft")),
                           ("Wenxin-Jiang_CS577-NLP_distilgpt2-shakespeare", ("full", "pretrain")),
                           ("Wenxin-Jiang_CS577-NLP_gpt2-tldr30", ("full", "unknown"))):
        profile = _profile(CORPUS / case)
        assert (profile.method, profile.objective) == expected, case


def test_real_lora_cards_of_the_peft_era_stay_lora():
    # LLaMA-Factory LoRA runs whose Transformers 4.34.1 cards lost PEFT's marks: still lora from their adapter files
    for case in ("heyblackC_BetterMixture-Top1-Solution", "worm128_AI-YinMei-backup"):
        assert _profile(CORPUS / case).method == "lora", case


def test_a_real_classifier_card_is_no_language_model_objective():
    profile = _profile(CORPUS / "SwapnilupGrad_HugginFace")  # bert-base-cased on GLUE QQP, text-classification
    # its card says no sft / pretrain; its config.json's head says classification (since fx-classify32)
    assert profile.objective == "classification" and "BertForSequenceClassification" in profile.evidence["objective"]


def test_the_cards_base_is_a_trained_start_only_where_the_first_loss_is_not_at_the_guess():
    # modelcard.py writes "fine-tuned version of [X]" from config._name_or_path, which a model built from a named
    # configuration has too: read as that name is, gated by where the first loss starts (ln 50257 = 10.8)
    from forensics.config import RunConfig
    from forensics.profile.model_start import pretrained_base
    config = RunConfig()
    config.add("card.base_model", "distilgpt2", "card.md: the model card's 'fine-tuned version of' line")
    config.add("model.vocab_size", 50257, "the published vocabulary of distilgpt2")
    assert pretrained_base(config, 3.41) == ("distilgpt2", "card.base_model, card.md: the model card's 'fine-tuned "
                                                           "version of' line")
    assert pretrained_base(config, 10.9) is None
    assert pretrained_base(config) is None


def test_a_real_keras_card_of_continued_pretraining_gets_no_from_scratch_rate_cause():
    # distilgpt2 on Shakespeare at 2e-5, first train loss 3.41: a trained model's rate, not pre-training's 3e-4
    analysis = forensics.analyze(CORPUS / "Wenxin-Jiang_CS577-NLP_distilgpt2-shakespeare")
    assert analysis.run_profile.objective == "pretrain"
    assert not [c for c in analysis.causes if c.cause == "lr_too_low"]


def test_an_encoder_decoder_named_for_masked_text_is_no_task_fine_tune():
    # saranscript's bart-mlm-pubmed-45: BART trained to restore masked PubMed text (its own denoising objective
    # continued), where the base's name alone would have said sft; kagglenews's BART summarizer keeps sft
    mlm = forensics.analyze(CORPUS / "saranscript_huggingface-models_bart-mlm-pubmed45").run_profile
    summarizer = forensics.analyze(CORPUS / "saranscript_huggingface-models_bart-kagglenews").run_profile
    assert (mlm.method, mlm.objective) == ("full", "unknown")
    assert summarizer.objective == "sft"
