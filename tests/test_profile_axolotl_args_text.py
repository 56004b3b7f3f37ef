"""Tests of the run profile's framework from an args text: Axolotl, TRL.

From the consoles and run texts the tool did not read, found on real runs (day 7, second batch)."""
from __future__ import annotations

from support.final_series import _analyze


# ---- (5) axolotl's training arguments in TensorBoard's args text -------------------------------------------------------


def _tensorboard_run(folder, args):
    """The HF TensorBoardCallback's writing: `add_text("args", args.to_json_string())` and `train/loss` scalars."""
    import json
    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(log_dir=str(folder))
    writer.add_text("args", json.dumps(args, indent=2))
    for step in range(1, 41):
        writer.add_scalar("train/loss", 2.0 - step * 0.02, step)
        writer.add_scalar("train/learning_rate", 2e-4, step)
    writer.close()


_TRAINING_ARGS = {"output_dir": "./lora-out", "num_train_epochs": 4, "per_device_train_batch_size": 4,
                  "learning_rate": 2e-4, "fp16": True, "bf16": False, "logging_steps": 1, "max_seq_length": 2048}


def test_axolotl_fields_in_the_args_text_name_axolotl_not_trl(tmp_path):
    """axolotl's AxolotlTrainingArguments as the TensorBoard args text (`sample_packing`, `relora_steps`,
    `lr_quadratic_warmup`, ... beside `max_seq_length`): named trl for `max_seq_length`; its own fields name axolotl."""
    _tensorboard_run(tmp_path / "runs" / "Dec12_01-05-00_host", dict(
        _TRAINING_ARGS, sample_packing=False, eval_sample_packing=None, sample_packing_efficiency=1.0,
        relora_steps=None, relora_warmup_steps=None, lr_quadratic_warmup=False, do_bench_eval=False))
    assert _analyze(tmp_path).run_profile.to_dict()["framework"] == "axolotl"


def test_an_sft_config_args_text_is_still_trl(tmp_path):
    """TRL's SFTConfig as the args text (`max_seq_length`, `packing`, `dataset_text_field`): still trl."""
    _tensorboard_run(tmp_path / "runs" / "run1", dict(_TRAINING_ARGS, packing=False, dataset_text_field="text"))
    assert _analyze(tmp_path).run_profile.to_dict()["framework"] == "trl"
