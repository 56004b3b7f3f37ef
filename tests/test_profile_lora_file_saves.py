"""The run profile's method (forensics/profile/method.py) from a console that saves a file named for LoRA.

Run-profile readings of branch fx-profile8. Every synthetic run is written under a folder named `run`: the test's own
folder name would be read as the run's name."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_console import trainer_console as _console


CORPUS = Path(__file__).parent / "realworld"


@pytest.mark.parametrize("line", [
    # JunyiJ_PostTraining-LLM-Small_dpo's own loop
    "Saved checkpoint to /Users/junyi/Projects/PostTraining-LLM-Small/gemma-2-2b-checkpoints/dpo_lora_epoch1_step10.pt",
    "saving weights to out/LoRA-step500.safetensors",
])
def test_a_console_that_saves_a_file_named_for_lora_trained_a_lora(tmp_path, line):
    profile = forensics.analyze(_console(tmp_path, line)).run_profile
    assert profile.method == "lora" and "lora" in profile.evidence["method"].lower()


@pytest.mark.parametrize("line", [
    "Saved checkpoint to /x/checkpoints/dpo_epoch1_step10.pt",  # no LoRA named
    "Loading /x/checkpoints/dpo_lora_epoch1_step10.pt",  # loaded, not saved
    "Saved checkpoint to /x/checkpoints/explora_epoch1.pt",  # a word that only holds the letters
])
def test_a_console_that_saves_no_lora_file_says_no_method(tmp_path, line):
    assert forensics.analyze(_console(tmp_path, line)).run_profile.method == "unknown"


@pytest.mark.parametrize("case", ["JunyiJ_PostTraining-LLM-Small_dpo", "JunyiJ_PostTraining-LLM-Small_dpo_flat"])
def test_the_corpus_dpo_loop_that_saves_lora_files_trained_a_lora(case):
    assert forensics.analyze(CORPUS / case).run_profile.method == "lora"
