"""The run profile's precision (forensics/profile/precision.py) from an old transformers release's whole
training_args.bin without a bf16 field: fp32 where fp16 is off.

Run-profile readings of branch fx-profile8."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.config_profile import profile_with as _profile_with


CORPUS = Path(__file__).parent / "realworld"


# transformers 3.0's TrainingArguments (qwu01_transformers_LM's output/training_args.bin): 31 fields, no bf16
_RELEASE_3_FIELDS = ("output_dir", "overwrite_output_dir", "do_train", "do_eval", "do_predict",
                     "evaluate_during_training", "per_device_train_batch_size", "per_device_eval_batch_size",
                     "per_gpu_train_batch_size", "per_gpu_eval_batch_size", "gradient_accumulation_steps",
                     "learning_rate", "weight_decay", "adam_epsilon", "max_grad_norm", "num_train_epochs", "max_steps",
                     "warmup_steps", "logging_dir", "logging_first_step", "logging_steps", "save_steps",
                     "save_total_limit", "no_cuda", "seed", "fp16_opt_level", "local_rank", "tpu_num_cores",
                     "tpu_metrics_debug", "dataloader_drop_last")


@pytest.mark.parametrize("source, precision", [("output/training_args.bin", "fp32"),
                                               ("train_config.yaml", "unknown")])  # a user's file holds some fields
def test_an_old_release_s_whole_training_args_bin_without_bf16_is_fp32(source, precision):
    """The Trainer's training_args.bin holds every field of its release's TrainingArguments, however few: one with
    fp16 off and no bf16 field (added in 4.13) ran fp32."""
    values = {key: (1 if key.endswith(("size", "steps")) else "x", source) for key in _RELEASE_3_FIELDS}
    values["fp16"] = (False, source)
    if source.endswith(".bin"):
        values["training_args_class"] = ("transformers.training_args.TrainingArguments", source)
    assert _profile_with(**values).precision == precision


def test_the_corpus_run_of_transformers_3_with_fp16_off_is_fp32():
    assert forensics.analyze(CORPUS / "qwu01_transformers_LM").run_profile.precision == "fp32"
