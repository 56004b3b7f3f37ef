"""Tests of the run profile: an Unsloth banner with blank lines, a printed bitsandbytes config.

From review day 9 (batches AP and AQ): each test fails on the code before its change; each change also has a test
where its rule must not fire. Folder names avoid the words the profile reads in a run's names."""
from __future__ import annotations

import forensics
from support.console_files import _mlx_console


# ---- change 9: Unsloth's banner with blank lines between its lines; a printed bitsandbytes 4-bit compute dtype -------------


def test_an_unsloth_banner_captured_with_blank_lines_between_gives_the_model_size(tmp_path):
    banner = ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1", "",
              "   \\\\   /|    Num examples = 200 | Num Epochs = 1 | Total steps = 200", "",
              "O^O/ \\_/ \\    Batch size per device = 1 | Gradient accumulation steps = 8", "",
              "\\        /    Data Parallel GPUs = 1 | Total batch size (1 x 8 x 1) = 8", "",
              ' "-____-"     Trainable parameters = 40,370,176 of 7,655,986,688 (0.53% trained)', ""]
    rows = [f"{{'loss': {0.5 - 0.01 * i:.4f}, 'grad_norm': 0.3, 'learning_rate': 5e-06, 'reward': {0.1 * i:.2f}, "
            f"'reward_std': 0.4, 'kl': 0.001, 'epoch': {i / 200:.3f}}}" for i in range(1, 31)]
    profile = forensics.analyze(_mlx_console(tmp_path / "run", banner, rows)).run_profile
    assert (profile.method, profile.model_params, profile.framework) == ("lora", 7655986688, "unsloth")


def test_a_printed_bitsandbytes_config_gives_the_4bit_layers_compute_dtype(tmp_path):
    head = ["Unsloth: vLLM Bitsandbytes config using kwargs = {'load_in_8bit': False, 'load_in_4bit': True, "
            "'bnb_4bit_compute_dtype': 'bfloat16', 'bnb_4bit_quant_type': 'nf4'}"]
    rows = [f"{{'loss': {0.5 - 0.01 * i:.4f}, 'grad_norm': 0.3, 'learning_rate': 5e-06, 'epoch': {i / 200:.3f}}}"
            for i in range(1, 31)]
    assert forensics.analyze(_mlx_console(tmp_path / "run", head, rows)).run_profile.precision == "bf16"
    off = [head[0].replace("'load_in_4bit': True", "'load_in_4bit': False")]
    assert forensics.analyze(_mlx_console(tmp_path / "off", off, rows)).run_profile.precision == "unknown"
