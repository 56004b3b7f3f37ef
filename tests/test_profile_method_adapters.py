"""The run profile's method (forensics/profile/method.py) from what a run does with an adapter: a console that saves,
pushes or uploads an adapter (or whose Trainer warns that the model it trains is a PeftModel) trained an adapter -
"lora" where LoRA is named, else "peft"; a console that only loads one, or names none, says no method; a model handed
whole to a Trainer is a full fine-tune.

Run-profile readings of branch fx-profile7. Every synthetic run is written under a folder named `run`: the test's own
folder name would be read as the run's name."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from support.trainer_console import trainer_console as _console, trainer_notebook


@pytest.mark.parametrize("line", [
    "  Pushing adapter to s1nn3rx69/recall-policy-l2...",  # aryan-gupta7_round2_sclr_l2
    "GRPO adapter saved → /root/hotpotqa-agent/training/checkpoints/grpo_adapter",  # Ning-Guo_hotpotqa-agent
    "No label_names provided for model class `PeftModelForCausalLM`. Since `PeftModel` hides base models input "
    "arguments, if label_names is not given, label_names can't be set automatically within `Trainer`.",  # rajiv143
    "adapter_model.safetensors:   2%|▏           | 2.56M/160M [00:00<01:06, 2.36MB/s]",  # the Hub's upload bar
])
def test_a_console_that_saves_an_adapter_naming_no_lora_trained_a_peft_adapter(tmp_path: Path, line: str):
    profile = forensics.analyze(_console(tmp_path, line)).run_profile
    assert profile.method == "peft" and "adapter trained" in profile.evidence["method"]


def test_a_console_that_saves_a_lora_adapter_trained_lora(tmp_path: Path):
    profile = forensics.analyze(_console(tmp_path, "LoRA adapter saved to: ./outputs/final_adapter")).run_profile
    assert profile.method == "lora"


@pytest.mark.parametrize("line", [
    "Loading adapter from ./outputs/final_adapter",
    "python run_eval.py --adapter training/checkpoints/grpo_adapter",
    "Saving mm_projector adapter to ./checkpoints/mm_projector.bin",  # LLaVA's projector: no PEFT adapter
    "Model saved to ./outputs/final",
])
def test_a_console_that_saves_no_adapter_says_no_method(tmp_path: Path, line: str):
    assert forensics.analyze(_console(tmp_path, line)).run_profile.method == "unknown"


def _trainer_notebook(tmp_path: Path, setup: str) -> Path:
    """A notebook that loads gpt2, runs `setup`, hands the model to TRL's SFTTrainer and prints the Trainer's logs."""
    code = ("from transformers import AutoModelForCausalLM\nfrom trl import SFTConfig, SFTTrainer\n"
            "model = AutoModelForCausalLM.from_pretrained('gpt2')\n" + setup +
            "args = SFTConfig(output_dir='out', learning_rate=5e-5, bf16=True)\n"
            "trainer = SFTTrainer(model=model, args=args, train_dataset=data)\ntrainer.train()\n")
    return trainer_notebook(tmp_path, code)


@pytest.mark.parametrize("comment", [
    "# peft_config=None,  # optional: set up PEFT here, e.g. LoRA\n",  # weiyuli20_llm_alignment
    "out_dir = 'out'  # directory to save adapters\n",  # google-gemini_gemma-cookbook
])
def test_a_model_handed_whole_to_a_trainer_is_a_full_fine_tune_whatever_its_comments_say(tmp_path: Path, comment: str):
    profile = forensics.analyze(_trainer_notebook(tmp_path, comment)).run_profile
    assert profile.method == "full"


def test_a_model_wrapped_in_a_lora_adapter_is_no_full_fine_tune(tmp_path: Path):
    setup = "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))\n"
    assert forensics.analyze(_trainer_notebook(tmp_path, setup)).run_profile.method == "lora"
