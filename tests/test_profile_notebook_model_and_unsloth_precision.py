"""Tests of the run profile from notebooks (profile/): the model trained, Unsloth's precision,
a full SFT, a small vocabulary's fresh head.

From the judging rules mended after the fifth day's corpus batches: each test stands for a real run of
tests/realworld named in its docstring."""
from __future__ import annotations

import json

import forensics
from support.review_runs import ran_notebook


def test_unsloth_switching_a_model_to_float32_says_the_precision(tmp_path):
    """SaphalyaPeta's Gemma-3-270M, yujie0405's Gemma-3-4B and holazzer's Gemma-3-1B notebooks (tests/realworld): Unsloth
    prints that float16 will not work for the model and trains it in float32; the profile left precision unknown."""
    run = tmp_path / "run"
    run.mkdir()
    lines = ["Unsloth: Using float16 precision for gemma3 won't work! Using float32.",
             "Unsloth: Switching to float32 training since model cannot work with float16"]
    lines += [str({"loss": round(3.0 - s / 20, 3), "grad_norm": 1.0, "learning_rate": 2e-4, "epoch": s / 20})
              for s in range(1, 21)]
    (run / "train.log").write_text("\n".join(lines) + "\n")
    profile = forensics.analyze(run).run_profile
    assert profile.precision == "fp32", profile.evidence


def test_the_model_a_notebook_trains_is_the_first_it_loads_and_not_one_under_if_false(tmp_path):
    """sukibk's Llama-3.2-3B QLoRA (tests/realworld), run from Unsloth's `Llama3.2_(1B_and_3B)-Conversational.ipynb`:
    it loads unsloth/Llama-3.2-3B-Instruct, and the template's reload for inference sits under `if False:` naming
    "lora_model"; the profile took the last loader's name and the size from the file's name (1B). user074's notebook
    loads its policy (tinyLlama) first and an 8B critic after it: 8B was given as the trained model's size."""
    dicts = "\n".join(str({"loss": round(2.5 - s / 50, 3), "grad_norm": 0.5, "learning_rate": 2e-4, "epoch": s / 60})
                      for s in range(1, 31))
    run = ran_notebook(tmp_path / "run", "Llama3.2_(1B_and_3B)-Conversational.ipynb", [
        ("from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"unsloth/Llama-3.2-3B-Instruct\", load_in_4bit = True)\n", ""),
        ("trainer.train()\n", dicts),
        ("if False:\n    model, tokenizer = FastLanguageModel.from_pretrained(model_name = \"lora_model\")\n", ""),
        ("critic, t = FastLanguageModel.from_pretrained(model_name = \"checkpoints/llama3-8b-critic\")\n", ""),
    ])
    a = forensics.analyze(run)
    assert a.config.get("model.name_or_path") == "unsloth/Llama-3.2-3B-Instruct"
    assert a.run_profile.model_params == 3_000_000_000, a.run_profile.evidence


def test_the_model_trained_is_the_one_handed_to_the_trainer_not_a_critic_loaded_before_it(tmp_path):
    """user074's DPO notebook (tests/realworld): the policy is loaded (tinyLlama), then an 8B critic for scoring, then
    Unsloth's `PatchDPOTrainer()` and `DPOTrainer(model=model, ...)`; the trained model is the policy, not the loader
    called last before the trainer."""
    dicts = "\n".join(str({"loss": round(0.69 - s / 100, 3), "rewards/margins": s / 10, "epoch": s / 30})
                      for s in range(1, 31))
    run = ran_notebook(tmp_path / "run", "dpo.ipynb", [
        ("from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"checkpoints/tinyLlama-GSM8K\")\nmodel = FastLanguageModel.get_peft_model(model, r = 16)\n", ""),
        ("critic, critic_tokenizer = FastLanguageModel.from_pretrained(model_name = \"checkpoints/llama3-8b-critic\")\n",
         ""),
        ("from unsloth import PatchDPOTrainer\nPatchDPOTrainer()\n", ""),
        ("from trl import DPOTrainer\ndpo_trainer = DPOTrainer(model=model, ref_model=None)\ndpo_trainer.train()\n", dicts),
    ])
    a = forensics.analyze(run)
    assert a.config.get("model.name_or_path") == "checkpoints/tinyLlama-GSM8K"
    assert a.run_profile.model_params is None, a.run_profile.evidence


def _unsloth_notebook(folder, banner_bf16: str, extra_output: str = ""):
    dicts = "\n".join(str({"loss": round(2.5 - s / 50, 3), "grad_norm": 0.5, "learning_rate": 2e-4, "epoch": s / 60})
                      for s in range(1, 31))
    banner = (f"==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching. Transformers: 4.50.0.\n"
              f"   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n"
              f"O^O/ \\_/ \\    Torch: 2.6.0+cu124. CUDA: 7.5. CUDA Toolkit: 12.4. Triton: 3.2.0\n"
              f"\\        /    Bfloat16 = {banner_bf16}. FA [Xformers = 0.0.29. FA2 = False]\n")
    return ran_notebook(folder, "sft.ipynb", [
        ("from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"unsloth/Qwen1.5-0.5B\", dtype = None)\n", banner),
        ("from trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model = model, args = SFTConfig(learning_rate = "
         "2e-4, max_steps = 30))\ntrainer.train()\n", extra_output + dicts),
    ])


def test_an_unsloth_trainer_with_neither_precision_flag_trains_in_the_models_half_dtype(tmp_path):
    """Elbergg's Qwen1.5-0.5B LoRA, TechTinkerPradhan's and darshlukkad's GRPO (tests/realworld): Unsloth on a T4
    (`Bfloat16 = FALSE`) with neither fp16 nor bf16 in the trainer's config; Unsloth's patched trainer sets
    `args.fp16 = float16; args.bf16 = not float16` from the model's dtype. The profile said precision unknown."""
    assert forensics.analyze(_unsloth_notebook(tmp_path / "t4", "FALSE")).run_profile.precision == "fp16"
    assert forensics.analyze(_unsloth_notebook(tmp_path / "a100", "TRUE")).run_profile.precision == "bf16"
    forced = _unsloth_notebook(tmp_path / "forced", "FALSE",
                               "Unsloth: Switching to float32 training since model cannot work with float16\n")
    assert forensics.analyze(forced).run_profile.precision == "fp32"


def test_a_full_sft_notebook_is_full_though_it_pip_installs_bitsandbytes_and_names_its_model_by_attribute(tmp_path):
    """jaeh8nkim's TRL full SFT of Qwen3-0.6B (tests/realworld): `!pip install ... bitsandbytes ...` in a cell (an
    install sets up no quantized base), the model loaded as `from_pretrained(config.base_model_name, ...)` (no literal
    name) and printed `596,049,920 total, 596,049,920 trainable parameters`; the profile left method and size unknown."""
    dicts = "\n".join(str({"loss": round(0.5 - s / 500, 3), "grad_norm": 1.0, "learning_rate": 1e-5, "epoch": s / 10})
                      for s in range(1, 31))
    run = ran_notebook(tmp_path / "run", "sft.ipynb", [
        ("!pip install -q --upgrade transformers accelerate datasets trl bitsandbytes\n", ""),
        ("from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("
         "config.base_model_name)\nprint(f'{n:,} total, {t:,} trainable parameters')\n",
         "Model loaded: 596,049,920 total, 596,049,920 trainable parameters\n"),
        ("from trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model=model, args=SFTConfig(learning_rate=1e-5))\n"
         "trainer.train()\n", dicts),
    ])
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.model_params) == ("full", 596_049_920), profile.evidence


def test_a_small_vocabularys_fresh_head_that_falls_gradually_is_training_from_scratch(tmp_path):
    """DanielPuentee's 0.9M-parameter decoder (1000-token BPE: 6.27 at its first line, step 100, ln 1000 = 6.91) and
    msh2481's (500 tokens, 6.22) and CollinPhipps' (5.95 by step 200) runs (tests/realworld) fall gradually from about
    ln(vocabulary): models from random weights, full pre-training; a first loss under 6.9 was not read so. A fine-tune's
    bad start at 6 that halves within the first few points still is not."""
    gradual = [{"step": 100 * s, "loss": round(6.27 * (0.93 ** s), 4)} for s in range(1, 41)]
    state = tmp_path / "scratch"
    state.mkdir()
    (state / "trainer_state.json").write_text(json.dumps({"global_step": 4000, "log_history": gradual}))
    profile = forensics.analyze(state).run_profile
    assert (profile.objective, profile.method) == ("pretrain", "full"), profile.evidence
    fast = [{"step": 10 * s, "loss": 6.0 if s == 1 else round(1.5 - s / 100, 4)} for s in range(1, 41)]
    state = tmp_path / "other"
    state.mkdir()
    (state / "trainer_state.json").write_text(json.dumps({"global_step": 400, "log_history": fast}))
    assert forensics.analyze(state).run_profile.objective == "unknown"
