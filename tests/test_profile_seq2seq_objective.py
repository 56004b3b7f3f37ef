"""The run profile's objective of a trained encoder-decoder (forensics/profile/objective.py): sequence-to-sequence
fine-tuning.

Run-profile readings of a trained encoder-decoder (branch fx-profile6): the heads it is trained under beside
`...ForConditionalGeneration` (Marian's `MarianMTModel`, the `AutoModelForSeq2SeqLM` class a notebook loads it with)
and a composite EncoderDecoderModel whose parts name the checkpoints they were warm-started from; each says
supervised (sequence-to-sequence) fine-tuning, and a run of the same shape with no such sign says no objective.
Every synthetic run is written under a folder named `run`: the test's own folder name would be read as the run's
name."""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics
from tests.test_profile_fx4_starts import _t5_notebook as _seq2seq_notebook

CORPUS = Path(__file__).parent / "realworld"


def test_a_t5_loaded_with_the_seq2seq_auto_class_is_a_sequence_to_sequence_fine_tune(tmp_path: Path):
    profile = forensics.analyze(_seq2seq_notebook(tmp_path, "AutoModelForSeq2SeqLM", "google-t5/t5-small")).run_profile
    assert profile.objective == "sft" and "AutoModelForSeq2SeqLM" in profile.evidence["objective"]


def test_a_model_loaded_with_the_causal_lm_auto_class_says_no_objective(tmp_path: Path):
    # (a decoder's loss on plain pairs is no sign of what it was trained for)
    profile = forensics.analyze(_seq2seq_notebook(tmp_path, "AutoModelForCausalLM", "gpt2")).run_profile
    assert profile.objective == "unknown"


def _composite_checkpoint(tmp_path: Path, parts_from: str | None) -> Path:
    """A Trainer checkpoint of a BERT-to-BERT EncoderDecoderModel (config.json as save_pretrained writes it: the
    parts' configs nested, each with its `_name_or_path` where it was warm-started from `parts_from`) and its loss."""
    folder = tmp_path / "run"
    folder.mkdir()
    part = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 30522, "hidden_size": 768}
    if parts_from is not None:
        part["_name_or_path"] = parts_from
    config = {"architectures": ["EncoderDecoderModel"], "model_type": "encoder-decoder", "is_encoder_decoder": True,
              "encoder": part, "decoder": {**part, "is_decoder": True, "add_cross_attention": True},
              "decoder_start_token_id": 101, "vocab_size": 30522, "torch_dtype": "float32"}
    (folder / "config.json").write_text(json.dumps(config))
    history = [{"epoch": i / 10, "learning_rate": 5e-5 * (1 - i / 20), "loss": round(2.4 * math.exp(-i / 6) + 1.1, 4),
                "step": 500 * i} for i in range(1, 11)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 5000, "max_steps": 5000, "epoch": 1.0,
                                                           "logging_steps": 500, "log_history": history}))
    return folder


def test_an_encoder_decoder_warm_started_from_named_parts_is_a_sequence_to_sequence_fine_tune(tmp_path: Path):
    profile = forensics.analyze(_composite_checkpoint(tmp_path, "bert-base-uncased")).run_profile
    assert profile.objective == "sft"
    assert "encoder bert-base-uncased, decoder bert-base-uncased" in profile.evidence["objective"]


def test_an_encoder_decoder_whose_parts_name_no_checkpoint_says_no_objective(tmp_path: Path):
    # (parts built from bare configs: random weights, whose training the config alone does not tell)
    assert forensics.analyze(_composite_checkpoint(tmp_path, None)).run_profile.objective == "unknown"


def test_a_marian_checkpoint_trained_with_predict_with_generate_is_a_sequence_to_sequence_fine_tune():
    # kiran280321_multilingual-translation: MarianMTModel in config.json, Seq2SeqTrainingArguments in training_args.bin
    profile = forensics.analyze(CORPUS / "kiran280321_multilingual-translation").run_profile
    assert profile.objective == "sft" and "MarianMTModel" in profile.evidence["objective"]


def _scored_run(tmp_path: Path, score: str) -> Path:
    """A Trainer output folder with no model config: a loss and, per evaluation, an eval loss and `score`."""
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "epoch": s / 100, "loss": round(3.0 - s / 400, 4)} for s in range(50, 550, 50)]
    history += [{"step": s, "epoch": s / 100, "eval_loss": round(2.9 - s / 500, 4), score: 20 + s / 50}
                for s in (100, 200, 300, 400, 500)]
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 500, "log_history": history}))
    return run


def test_a_held_out_rouge_beside_the_loss_says_a_sequence_to_sequence_fine_tune(tmp_path: Path):
    # zoo-bimant_mt5-small-amazon-en-es: the card's table with its Rouge1 / Rouge2 columns and nothing else
    profile = forensics.analyze(_scored_run(tmp_path, "eval_rouge1")).run_profile
    assert profile.objective == "sft" and "eval_rouge1" in profile.evidence["objective"]


def test_a_held_out_bleu_alone_says_no_objective(tmp_path: Path):
    # BLEU also scores a plain language model's free text (a Keras word model on a book)
    assert forensics.analyze(_scored_run(tmp_path, "eval_bleu")).run_profile.objective == "unknown"


def test_rouge_says_the_task_not_a_start_from_trained_weights(tmp_path: Path):
    # NijatZeynalov's mT5 summarizer: first logged loss 25.5 (mT5's span-corruption start, far above ln V), falling
    # to 2.2 while ROUGE rises; judged healthy. The ROUGE evidence gives sft but no claim on where the loss may start
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "epoch": s / 1000, "loss": round(2.2 + 23.3 * math.exp(-s / 300), 4)}
               for s in range(100, 7100, 100)]
    history += [{"step": s, "epoch": s / 1000, "eval_loss": round(2.0 + 1.4 * math.exp(-s / 2000), 4),
                 "eval_rouge1": round(0.34 - 0.11 * math.exp(-s / 2000), 4)} for s in range(1000, 8000, 1000)]
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 7000, "log_history": history}))
    analysis = forensics.analyze(run)
    assert analysis.run_profile.objective == "sft"
    assert not any(f.kind == "start_above_uniform_guess" for f in analysis.findings)


def test_rouge_beside_a_name_that_says_masked_text_restored_says_no_sft():
    # gayanin's bart-mlm-pubmed-45 card: BART restoring masked PubMed text (its denoising pre-training continued),
    # scored by ROUGE on the side
    profile = forensics.analyze(CORPUS / "saranscript_huggingface-models_bart-mlm-pubmed45").run_profile
    assert profile.objective != "sft"
