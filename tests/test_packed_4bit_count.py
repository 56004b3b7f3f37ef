"""A model loaded in 4 bits by bitsandbytes stores two weights a byte (a Params4bit's numel is half its weight's), so a
count of `param.numel()` over it - the `print_trainable_parameters` helper copied into QLoRA notebooks, PEFT before
it doubled Params4bit - says about half the model (Falcon-7B as 3,613,463,424). Such a count is no model size where
the run's names give one it falls well short of; PEFT's corrected count on a 4-bit base, and any count on a 16-bit
base, is the size. Runs written in tmp_path as PEFT's adapter_config.json and a Trainer console print them."""
from __future__ import annotations

import json

from support.format_runs import analyze_logs, write_file


def _qlora_run(folder, all_params, trainable=4_718_592, base="tiiuae/falcon-7b", four_bit=True, commas=False):
    """A LoRA adapter's config beside the console of its Trainer run: the 4-bit load, the parameter count line, then
    the Trainer's log dicts (30 steps, loss 2.4 -> 1.3); `commas`: PEFT's own print (`{:,d}`), else the helper's."""
    write_file(folder, "adapter_config.json", json.dumps({
        "base_model_name_or_path": base, "peft_type": "LORA", "r": 16, "lora_alpha": 32,
        "target_modules": ["query_key_value"], "task_type": "CAUSAL_LM"}))
    lines = [f"Loading {base} in 4-bit (nf4, double quantization)" if four_bit else f"Loading {base} in bfloat16",
             f"trainable params: {trainable:{',' * commas}d} || all params: {all_params:{',' * commas}d} || "
             f"trainable%: {100 * trainable / all_params}"]
    lines += [str({"loss": round(2.4 - 1.1 * s / 30, 4), "learning_rate": 2e-4, "epoch": round(s / 30, 2)})
              for s in range(1, 31)]
    return write_file(folder, "train.log", "\n".join(lines) + "\n")


def test_a_packed_count_on_a_4bit_base_is_not_the_model_size(tmp_path):
    profile = analyze_logs(_qlora_run(tmp_path, 3_613_463_424)).run_profile
    assert profile.method == "qlora"
    assert profile.model_params == 7_000_000_000  # the base's name, not the packed count


def test_peft_corrected_count_on_a_4bit_base_is_the_model_size(tmp_path):
    """PEFT 0.4 and later double a Params4bit's numel: the count is the model's (and its adapter's) size."""
    profile = analyze_logs(_qlora_run(tmp_path, 6_926_439_296, commas=True)).run_profile
    assert profile.method == "qlora" and profile.model_params == 6_926_439_296


def test_a_lora_run_on_a_16bit_base_keeps_its_all_params_count(tmp_path):
    profile = analyze_logs(_qlora_run(tmp_path, 6_926_439_296, four_bit=False)).run_profile
    assert profile.method == "lora" and profile.model_params == 6_926_439_296
