"""A sequence-to-sequence fine-tune starting above the uniform guess over its vocabulary, read from its training loss
(a SEQ_2_SEQ_LM adapter) or, where no training loss was logged, from its first eval loss.

A seq2seq language model's token loss has the same bound as a causal one's: a uniform guess over its vocabulary, ln V
(t5-small: ln 32128 = 10.38). A LoRA of a trained T5 (PEFT task_type SEQ_2_SEQ_LM) whose first losses lie above it
scored its targets worse than chance (labels padded and never masked to -100). A classifier's adapter (SEQ_CLS) has a
loss over its labels, not its vocabulary, and is not read so. A Trainer whose logging_steps exceed the run's length
logs no training loss at all: the first eval loss, the model as it stands scoring held-out targets, then says the same.
"""
from __future__ import annotations

import json
import math

import forensics

VOCAB = 32128  # t5-small; ln = 10.38
# Seq2SeqTrainer LoRA logged every 5 steps: seven points above ln V, then the fall as the adapter learns the padding
ABOVE_THEN_FELL = [15.02, 12.68, 11.10, 10.61, 11.27, 11.30, 10.93, 9.11, 8.79, 5.89, 4.95, 3.56, 2.74, 2.68, 2.37,
                   3.44, 1.34, 1.95, 1.43, 1.11, 1.14, 1.35, 0.89, 1.05, 0.88, 0.77, 0.95, 0.66]
# the same LoRA on targets a trained T5 reads: well under ln V from its first window
BELOW_GUESS = [3.4, 3.0, 2.8, 2.6, 2.5, 2.4, 2.35, 2.3, 2.25, 2.2, 2.18, 2.15, 2.1, 2.08, 2.05, 2.03, 2.0, 1.98, 1.97,
               1.95, 1.94, 1.93, 1.92, 1.91, 1.9, 1.9, 1.89, 1.88]
# one eval an epoch, no training loss logged (logging_steps 500 over 220 steps)
EVALS_ABOVE = [10.914, 5.393, 1.518, 0.403, 0.351, 0.345, 0.344, 0.339, 0.335, 0.333]
EVALS_BELOW = [2.91, 2.40, 2.10, 1.93, 1.85, 1.80, 1.77, 1.75, 1.74, 1.73]


def _adapter_run(tmp_path, losses, task_type):
    run = tmp_path / "checkpoint-140"
    run.mkdir()
    history = [{"step": 5 * (i + 1), "epoch": round(3 * (i + 1) / len(losses), 4), "loss": v,
                "grad_norm": 3.0, "learning_rate": 2e-4 * (1 - i / len(losses))} for i, v in enumerate(losses)]
    state = {"global_step": 5 * len(losses), "max_steps": 5 * len(losses), "num_train_epochs": 3,
             "logging_steps": 5, "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    adapter = {"base_model_name_or_path": "t5-small", "peft_type": "LORA", "task_type": task_type, "r": 8,
               "lora_alpha": 32, "lora_dropout": 0.05, "target_modules": ["q", "v"]}
    (run / "adapter_config.json").write_text(json.dumps(adapter))
    return run


def _eval_only_run(tmp_path, evals):
    run = tmp_path / "checkpoint-220"
    run.mkdir()
    history = [{"epoch": float(i + 1), "eval_loss": v, "eval_runtime": 1.2, "step": 22 * (i + 1)}
               for i, v in enumerate(evals)]
    history.append({"epoch": 10.0, "step": 220, "total_flos": 1.0e14, "train_loss": 2.1, "train_runtime": 80.0})
    state = {"global_step": 220, "max_steps": 220, "num_train_epochs": 10, "logging_steps": 500, "eval_steps": 500,
             "best_metric": min(evals), "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    config = {"_name_or_path": "t5-small", "architectures": ["T5ForConditionalGeneration"], "d_model": 512,
              "d_ff": 2048, "d_kv": 64, "is_encoder_decoder": True, "model_type": "t5", "num_layers": 6,
              "num_decoder_layers": 6, "num_heads": 8, "vocab_size": VOCAB, "torch_dtype": "float32",
              "transformers_version": "4.44.2"}
    (run / "config.json").write_text(json.dumps(config))
    return run


def test_a_seq2seq_lora_starting_above_ln_vocab_warns_start_above_uniform_guess(tmp_path):
    a = forensics.analyze(_adapter_run(tmp_path, ABOVE_THEN_FELL, "SEQ_2_SEQ_LM"))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 5)
    assert "uniform guess" in a.first_incident.message


def test_a_seq2seq_lora_starting_under_ln_vocab_has_no_start_warning(tmp_path):
    a = forensics.analyze(_adapter_run(tmp_path, BELOW_GUESS, "SEQ_2_SEQ_LM"))
    assert not any(f.kind == "start_above_uniform_guess" for f in a.findings)


def test_a_classifier_adapter_is_not_held_to_its_vocabulary_guess(tmp_path):
    a = forensics.analyze(_adapter_run(tmp_path, ABOVE_THEN_FELL, "SEQ_CLS"))
    assert not any(f.kind == "start_above_uniform_guess" for f in a.findings)


def test_a_fine_tune_with_only_eval_loss_above_ln_vocab_warns_at_its_first_eval(tmp_path):
    a = forensics.analyze(_eval_only_run(tmp_path, EVALS_ABOVE))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 22)
    assert "no training loss was logged" in a.first_incident.message
    assert f"ln {VOCAB} = {math.log(VOCAB):.4g}" in a.first_incident.message


def test_a_fine_tune_with_only_eval_loss_under_ln_vocab_has_no_start_warning(tmp_path):
    a = forensics.analyze(_eval_only_run(tmp_path, EVALS_BELOW))
    assert not any(f.kind == "start_above_uniform_guess" for f in a.findings)
