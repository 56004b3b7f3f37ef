"""Tests of the fp16 advice (causes/): the flag named in the run's framework's terms.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations


# 5. advice in the run's framework's terms; a cyclic schedule logged sparsely is a schedule


def _fp16_advice(framework, **cfg):
    from forensics.causes import infer_causes
    from forensics.config import Thresholds
    from forensics.profile import RunProfile
    from tests.test_causes import NAN_GRAD, config, error
    found = infer_causes(config(fp16=True, **cfg), NAN_GRAD, [error()], [], Thresholds(),
                         RunProfile(framework=framework, precision="fp16"))
    return next(c for c in found if c.cause == "fp16_overflow").suggestion


def test_the_fp16_advice_names_megatrons_flag_for_a_megatron_run():
    """A Megatron run that overflowed in fp16: the switch is the launch flag --bf16, not the TrainingArguments field
    bf16=True it does not have. Before: 'Train in bf16 (bf16=True)' to every run."""
    advice = _fp16_advice("megatron")
    assert "--bf16" in advice and "bf16=True" not in advice and "max_grad_norm" not in advice


def test_the_fp16_advice_names_the_deepspeed_config_for_a_hand_written_deepspeed_loop():
    """A hand-written loop run by DeepSpeed (its config's fp16 section on): the switch is the config's
    "bf16": {"enabled": true}; a run of unknown framework is told it in words."""
    advice = _fp16_advice("deepspeed", ds__fp16__enabled=True)
    assert '"bf16": {"enabled": true}' in advice and "bf16=True" not in advice
    words = _fp16_advice("unknown")
    assert "bfloat16" in words and "bf16=True" not in words and "--bf16" not in words


def test_the_fp16_advice_for_a_trainer_run_keeps_the_training_arguments_flag():
    """An HF Trainer / TRL run: bf16=True in its TrainingArguments, as before (and the DeepSpeed section beside it
    where its DeepSpeed config sets fp16 itself)."""
    assert "bf16=True" in _fp16_advice("hf_trainer") and "max_grad_norm=1.0" in _fp16_advice("trl")
    both = _fp16_advice("hf_trainer", ds__fp16__enabled=True)
    assert "bf16=True" in both and '"bf16": {"enabled": true}' in both
