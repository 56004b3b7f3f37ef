"""DeepSpeed-Chat step 3 (PPO) takes --actor_lora_dim / --critic_lora_dim (0 by default: the model trained whole); its
launcher's `cmd =` line says which, whatever the copied script is called (gouqi666_deep-speed-chat: train_llama.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics

CASE = Path(__file__).parent / "realworld" / "gouqi666_deep-speed-chat"
LOG = CASE / "training" / "step3_rlhf_finetuning" / "output" / "training.log"


def _run_with_cmd(tmp_path: Path, extra: str) -> forensics.RunProfile:
    """The real step-3 console (its first 1,300 lines: launch, config print, PPO steps 0-~50), the launch line's
    arguments added to."""
    lines = LOG.read_text(errors="replace").splitlines(keepends=True)[:1300]
    lines = [line.replace("--output_dir ./output", f"--output_dir ./output {extra}") if "cmd = " in line else line
             for line in lines]
    (tmp_path / "training.log").write_text("".join(lines))
    return forensics.analyze(tmp_path).run_profile


def test_a_step3_console_launched_without_lora_dims_trains_the_full_model():
    profile = forensics.analyze(CASE).run_profile
    assert profile.method == "full"
    assert "--actor_lora_dim" in profile.evidence["method"]


@pytest.mark.parametrize("extra, method", [
    ("--actor_lora_dim 128 --only_optimize_lora", "lora"),
    ("--actor_lora_dim 64 --critic_lora_dim 64", "lora"),
    # a LoRA critic beside a full actor (a real step-3 script: --critic_lora_dim 128, no --actor_lora_dim) trains
    # the policy whole: the method is the actor's
    ("--critic_lora_dim 128 --critic_lora_module_name layers.", "full"),
    ("--actor_lora_dim 0 --critic_lora_dim 128", "full"),
    ("--actor_lora_dim 0 --critic_lora_dim 0", "full"),
])
def test_a_step3_lora_dim_set_above_0_is_lora_and_0_is_full(tmp_path, extra, method):
    assert _run_with_cmd(tmp_path, extra).method == method


def test_a_launch_line_of_another_trainer_says_nothing_of_the_method(tmp_path):
    """Guard: a `cmd =` line of a script that prints no DeepSpeed-Chat step lines is no DeepSpeed-Chat evidence."""
    cmd = ("[2023-05-10 14:13:27,662] [INFO] [runner.py:540:main] cmd = /usr/bin/python -u -m "
           "deepspeed.launcher.launch --world_info=e30= train.py --model_name_or_path gpt2 --output_dir ./out\n")
    steps = "".join(f"{{'loss': {3.0 - s / 100:.4f}, 'learning_rate': 1e-05, 'epoch': {s / 100:.2f}}}\n"
                    for s in range(1, 40))
    (tmp_path / "train.log").write_text(cmd + steps)
    profile = forensics.analyze(tmp_path).run_profile
    assert "DeepSpeed-Chat" not in profile.evidence.get("method", "")


def test_only_deepspeed_chats_own_launch_lines_are_read_for_lora_dims():
    """Guard: a launcher line of another script (no main.py, no step 3's --actor_model_name_or_path) carries no
    DeepSpeed-Chat LoRA setting at all; DeepSpeed-Chat's step 1 main.py line does."""
    from forensics.ingest.console_facts import console_facts
    other = "[x] cmd = /usr/bin/python -u -m deepspeed.launcher.launch train.py --model_name_or_path gpt2 --lora_dim 8\n"
    assert "console_lora_dim" not in console_facts(other)
    assert console_facts("[x] cmd = deepspeed main.py --lora_dim 128 --only_optimize_lora\n")["console_lora_dim"] == 128


def test_a_long_launch_line_full_of_script_names_is_read_in_linear_time():
    """Guard: a `cmd =` line of 1 MB holding `.py` 200,000 times and no step-3 argument is read in well under a
    second's scale (a lazy `.py` then a greedy rest took minutes: quadratic in the `.py` count)."""
    import time
    from forensics.ingest.console_facts import console_facts
    line = "[x] cmd = deepspeed " + "a.py " * 200_000 + "\n"
    started = time.perf_counter()
    assert "console_lora_dim" not in console_facts(line)
    assert time.perf_counter() - started < 5
