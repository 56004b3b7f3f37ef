"""Tests of the run profile's objective: a pretrained encoder-decoder is sft.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics


# ---- change 4: a framework's "lora" beside a 4-bit base (PEFT's model card block) is QLoRA ----------------------------

import json  # noqa: E402

# ---- change 5: a trained encoder-decoder fine-tuned on its targets is supervised fine-tuning --------------------------


def _seq2seq_save(folder, config: dict):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    log = [{"loss": 3.0 - s / 100, "learning_rate": 5e-5, "epoch": s / 100, "step": s} for s in range(10, 210, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 200, "max_steps": 200}))
    return folder


def test_a_pretrained_encoder_decoder_trained_on_its_targets_is_sft(tmp_path):
    run = _seq2seq_save(tmp_path / "run", {"_name_or_path": "facebook/bart-base", "is_encoder_decoder": True,
                                          "architectures": ["BartForConditionalGeneration"], "model_type": "bart"})
    profile = forensics.analyze(run).run_profile
    assert profile.objective == "sft" and "facebook/bart-base" in profile.evidence["objective"]


def test_a_decoder_only_model_or_an_encoder_decoder_of_unknown_start_is_not_called_sft(tmp_path):
    decoder = _seq2seq_save(tmp_path / "a", {"_name_or_path": "gpt2", "architectures": ["GPT2LMHeadModel"]})
    unnamed = _seq2seq_save(tmp_path / "b", {"is_encoder_decoder": True, "architectures": ["T5ForConditionalGeneration"]})
    assert forensics.analyze(decoder).run_profile.objective == "unknown"
    assert forensics.analyze(unnamed).run_profile.objective == "unknown"
