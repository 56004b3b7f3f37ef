"""Advice for networks that are not decoder-only language models (fx-advice4): a T5-family encoder-decoder is judged
by T5 fine-tuning rates (1e-4 to 1e-3: the Hugging Face T5 docs, the original T5 code), a recurrent network is not told
a 7B-class transformer's range, and a script that calls its clipping `clip` is told `clip`, not `max_grad_norm`."""
from __future__ import annotations

import pytest

import forensics
from forensics.causes.lr_ranges import lr_range
from tests.test_causes import NAN_GRAD, by_id, config, error
from tests.test_fxadvice_audit import CORPUS, _causes


def _corpus(case: str) -> dict:
    if not (CORPUS / case).exists():
        pytest.skip("corpus case not present")
    return by_id(forensics.analyze(CORPUS / case).causes)


def _t5_run(model_type: str, lr: float) -> dict:
    """A full fine-tune at a constant `lr` whose grad_norm goes NaN at step 10 (`NAN_GRAD`), of a `model_type` model."""
    return _causes(config(learning_rate=lr, model__model_type=model_type), NAN_GRAD, [error()],
                   method="full", framework="hf_trainer")


def test_a_t5_at_3e_4_is_not_told_its_rate_is_too_high():
    """Anujaykalbhor's T5 summarizer at a constant 3e-4 went NaN: it was told to lower the rate to 1e-5 to 5e-5, a
    decoder LM's range; the T5 docs say 1e-4 and 3e-4 work well for almost all problems."""
    assert "lr_too_high" not in _t5_run("t5", 3e-4)


def test_a_decoder_lm_at_3e_4_is_still_told_its_rate_is_too_high():
    found = _t5_run("llama", 3e-4)["lr_too_high"]
    assert "1e-05 to 2e-05" in found.suggestion, found.suggestion


def test_a_t5_far_above_its_range_is_told_the_t5_range():
    found = _t5_run("mt5", 3e-3)["lr_too_high"]
    assert "0.0001 to 0.001" in found.suggestion and "T5-family" in found.suggestion, found.suggestion
    assert any("T5 docs" in e for e in found.evidence), found.evidence


def test_the_t5_rows_hold_for_every_size_and_the_decoder_rows_are_unchanged():
    assert lr_range("full", "sft", 11_000_000_000, "t5").describe() == "0.0001 to 0.001"
    assert lr_range("full", "sft", 11_000_000_000).describe() == "5e-06 to 1e-05"
    assert lr_range("full", "preference", None, "t5") == lr_range("full", "preference", None)


def test_an_mt5_named_by_its_model_card_is_given_the_t5_range():
    """Wenxin-Jiang's mT5-base card (fp16 NaN): its fp16 advice checked the rate against 1e-5 to 2e-5 for full
    fine-tuning and 1e-4 to 2e-4 for LoRA; the card's file name is the only place that says mT5."""
    advice = _corpus("Wenxin-Jiang_CS577-NLP-mt5-base")["fp16_overflow"].suggestion
    assert "0.0001 to 0.001" in advice and "T5-family" in advice and "1e-05 to 2e-05" not in advice, advice


def test_a_recurrent_network_is_not_given_a_transformer_range_nor_the_trainers_clip_name():
    """ohalon's RNN_RELU language model (pytorch/examples' word_language_model, lr 20, --clip 0.25, NaN from its first
    print) was told "0.00012 to 0.0003 for pre-training ... for a 7B-class model" and "keep clipping at
    max_grad_norm=0.25", a name its script does not have."""
    found = _corpus("ohalon_nlpia2_rnn-relu")["lr_too_high"]
    assert "7B-class" not in found.suggestion and "0.00012" not in found.suggestion, found.suggestion
    assert "recurrent network" in found.suggestion, found.suggestion
    assert "clip=0.25" in found.suggestion and "max_grad_norm" not in found.suggestion, found.suggestion
    assert any("model='RNN_RELU'" in e for e in found.evidence), found.evidence


def test_a_healthy_recurrent_run_gets_no_cause():
    """ohalon's LSTM (the same script, validation loss falling every epoch): nothing to explain, nothing said."""
    assert _corpus("ohalon_nlpia2_lstm") == {}
