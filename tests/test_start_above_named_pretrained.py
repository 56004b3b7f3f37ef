"""Tests of start_above_uniform_guess (analyzers.fine_tune_start) and the objective of named pretrained models.

A full fine-tune of a named pretrained model whose first loss sits above ln(vocabulary): not pre-training.

A loss starting at about ln V and falling is read as a model trained from random weights (objective pretrain), and
the start-above-guess check stands down for such runs. A config.json whose `_name_or_path` names a trained model (as
from_pretrained writes it; from_config writes it empty) says the run did not start from random weights: the start
above ln V is then a trained model scoring its targets worse than chance (a pretrained translation T5 at 12.9 over
its first 500 steps, ln 30101 = 10.31). The same loss from a config.json with an empty `_name_or_path` stays
pre-training, a pretrained model whose loss starts below ln V is no warning, and neither is one whose start above
ln V is over by the end of its warm-up (t5-small at 13.6 over a warm-up's first 50 steps, 8.8 at 100: judged healthy).
"""
from __future__ import annotations

import json
import math

import forensics

VOCAB = 30101  # ln = 10.31
# a seq2seq fine-tune logged every 500 steps: 12.9 at its first window, down to 0.46 over three epochs
ABOVE_THEN_LEARNED = [12.93, 11.66, 10.72, 9.68, 8.71, 7.80, 6.14, 4.63, 3.92, 3.25, 2.07, 1.22, 0.77, 0.61, 0.55,
                      0.50, 0.47, 0.46, 0.46, 0.458]
# a fresh model from ln V, falling gradually as random weights do
FROM_RANDOM = [10.31, 10.0, 9.5, 8.9, 8.2, 7.6, 7.0, 6.5, 6.1, 5.8, 5.5, 5.3, 5.1, 5.0, 4.9, 4.8, 4.75, 4.7, 4.65, 4.6]
# a fine-tune of the same pretrained T5 on text it knows: well under ln V from its first window
BELOW_GUESS = [3.1, 2.6, 2.3, 2.1, 1.95, 1.85, 1.78, 1.7, 1.66, 1.62, 1.6, 1.58, 1.56, 1.55, 1.54, 1.53, 1.52, 1.52,
               1.51, 1.5]


def _linear(i, n, warmup):
    return 2e-5 * (i + 1) / warmup if i < warmup else 2e-5 * (1 - (i - warmup) / n)


def _t5_run(tmp_path, losses, name_or_path, warmup=0):
    run = tmp_path / "checkpoint-10000"
    run.mkdir()
    history = [{"step": 500 * (i + 1), "epoch": round(3 * (i + 1) / len(losses), 3), "loss": v,
                "grad_norm": 2.5, "learning_rate": _linear(i, len(losses), warmup)} for i, v in enumerate(losses)]
    state = {"global_step": 500 * len(losses), "max_steps": 500 * len(losses), "num_train_epochs": 3,
             "logging_steps": 500, "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    config = {"_name_or_path": name_or_path, "architectures": ["T5ForConditionalGeneration"], "d_model": 300,
              "is_encoder_decoder": True, "model_type": "t5", "num_layers": 6, "num_decoder_layers": 6,
              "num_heads": 8, "d_ff": 2048, "d_kv": 64, "vocab_size": VOCAB, "transformers_version": "4.47.1"}
    (run / "config.json").write_text(json.dumps(config))
    return run


def test_a_named_pretrained_model_starting_above_ln_vocab_warns_start_above_uniform_guess(tmp_path):
    a = forensics.analyze(_t5_run(tmp_path, ABOVE_THEN_LEARNED, "someone/t5-translate"))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 500)
    assert f"ln {VOCAB} = {math.log(VOCAB):.4g}" in a.first_incident.message
    assert "someone/t5-translate" in a.first_incident.message


def test_a_named_pretrained_model_is_not_profiled_as_pretraining_from_its_high_start(tmp_path):
    profile = forensics.analyze(_t5_run(tmp_path, ABOVE_THEN_LEARNED, "someone/t5-translate")).run_profile
    assert profile.objective == "sft"
    assert "someone/t5-translate" in profile.evidence["objective"]


def test_a_model_built_from_its_config_starting_at_ln_vocab_stays_pretraining_with_no_warning(tmp_path):
    a = forensics.analyze(_t5_run(tmp_path, FROM_RANDOM, ""))
    assert a.run_profile.objective == "pretrain"
    assert not any(f.kind == "start_above_uniform_guess" for f in a.findings)


def test_a_named_pretrained_model_starting_below_ln_vocab_is_healthy(tmp_path):
    a = forensics.analyze(_t5_run(tmp_path, BELOW_GUESS, "someone/t5-translate"))
    assert a.status == "healthy" and a.first_incident is None


def test_a_named_pretrained_model_above_ln_vocab_only_during_its_warmup_is_healthy(tmp_path):
    under_by_the_peak = [13.6, 8.8, 3.9] + BELOW_GUESS[3:]
    a = forensics.analyze(_t5_run(tmp_path, under_by_the_peak, "t5-small", warmup=3))
    assert a.status == "healthy" and a.first_incident is None
