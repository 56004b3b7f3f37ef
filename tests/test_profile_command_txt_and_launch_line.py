"""Tests of the run profile from a command.txt or a launch line (profile/).

From the consoles and run texts the tool did not read, found on real runs (day 7, second batch)."""
from __future__ import annotations

from support.final_series import _analyze


# ---- (2) the launch command kept beside the log, or printed in the console ---------------------------------------------


_DICT_LINES = "".join("{'loss': %.4f, 'learning_rate': %.6g, 'epoch': %.2f}\n" % (2.0 - 0.05 * i, 5e-5, 0.01 * i)
                      for i in range(1, 21))


def test_a_command_txt_beside_the_log_gives_the_profile(tmp_path):
    """The Trainer's printed dicts with command.txt beside them (`python src/train_bash.py --stage sft --finetuning_type
    lora ... --fp16`, `\\` continuations): the profile read only the dicts (hf_trainer, the rest unknown); the command
    says lora, sft, llamafactory (its --stage / --finetuning_type pair), fp16."""
    (tmp_path / "train.log").write_text(_DICT_LINES)
    (tmp_path / "command.txt").write_text(
        "CUDA_VISIBLE_DEVICES=0 python src/train_bash.py \\\n    --stage sft \\\n"
        "    --model_name_or_path /data/models/some-llama \\\n    --finetuning_type lora \\\n"
        "    --lora_target q_proj,v_proj \\\n    --learning_rate 5e-5 \\\n    --fp16\n")
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["framework"], profile["precision"]) == (
        "lora", "sft", "llamafactory", "fp16"), profile


def test_a_launch_line_in_the_console_gives_the_profile(tmp_path):
    """A console that starts with the command it was run by (`llamafactory-cli train --stage dpo --finetuning_type lora
    --quantization_bit 4 --bf16 ...`): the CLI names the framework, the flags the method (4-bit: QLoRA), objective and
    precision."""
    (tmp_path / "train.log").write_text(
        "$ llamafactory-cli train --stage dpo --model_name_or_path Qwen/Qwen2.5-1.5B-Instruct --finetuning_type lora "
        "--quantization_bit 4 --bf16 --output_dir out\n" + _DICT_LINES)
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"], profile["framework"], profile["precision"]) == (
        "qlora", "preference", "llamafactory", "bf16"), profile
    assert profile["model_params"] == 1_500_000_000


def test_a_script_of_two_commands_says_nothing(tmp_path):
    """A run.sh holding two launches (an SFT stage, then a DPO stage) does not say which one this log is: not read."""
    (tmp_path / "train.log").write_text(_DICT_LINES)
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython train.py --stage sft --finetuning_type lora --fp16\n"
                                     "python train.py --stage dpo --finetuning_type full --bf16\n")
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert profile["method"] == "unknown" and profile["precision"] == "unknown", profile
