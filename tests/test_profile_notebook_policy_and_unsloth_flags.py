"""Tests of the run profile from notebooks (profile/): the policy trained, Unsloth's precision
flags.

From review day 5c (misreads of the second set of rules added on day 5): each test says which change it targets
and fails on the code before its fix."""
from __future__ import annotations

import forensics
from support.review_runs import ran_notebook


# ---- change 3: notebook_code.py, the model trained is the one handed to the first trainer -------------------------


def _banner(bf16: str) -> str:
    return ("==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching. Transformers: 4.50.0.\n"
            "   \\\\   /|    NVIDIA A100-SXM4-40GB. Num GPUs = 1. Max memory: 39.557 GB. Platform: Linux.\n"
            "O^O/ \\_/ \\    Torch: 2.6.0+cu124. CUDA: 8.0. CUDA Toolkit: 12.4. Triton: 3.2.0\n"
            f"\\        /    Bfloat16 = {bf16}. FA [Xformers = 0.0.29. FA2 = False]\n")


_SFT_DICTS = "\n".join(str({"loss": round(2.5 - s / 50, 3), "grad_norm": 0.5, "learning_rate": 2e-4, "epoch": s / 60})
                       for s in range(1, 31))


def test_a_peft_model_under_its_own_name_is_the_policy_not_a_critic_loaded_after_it(tmp_path):
    """Change 3 (`_trained_model`). An Unsloth notebook on an A100 (`Bfloat16 = TRUE`) loads its policy
    unsloth/Qwen2.5-0.5B-Instruct (dtype None), wraps it as `lora_model = FastLanguageModel.get_peft_model(model, ...)`,
    then loads an 8B judge in float16 to score answers, and builds `SFTTrainer(model = lora_model, ...)` with neither
    precision flag. No loader is bound to `lora_model`, so the rule falls back to the last loader before the trainer:
    the judge. The tool says model unsloth/Meta-Llama-3.1-8B-Instruct, model_params 8B and precision fp16 (the
    judge's dtype). Right: the trained model is the 0.5B policy the LoRA wraps, and Unsloth turns on bf16 from the
    policy's dtype (None on a bfloat16 GPU): a wrong size and a wrong precision, whose advice (fp16 overflow, loss
    scaling) does not apply."""
    run = ran_notebook(tmp_path / "run", "sft.ipynb", [
        ("from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"unsloth/Qwen2.5-0.5B-Instruct\", dtype = None)\n"
         "lora_model = FastLanguageModel.get_peft_model(model, r = 16)\n", _banner("TRUE")),
        ("judge, judge_tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"unsloth/Meta-Llama-3.1-8B-Instruct\", dtype = torch.float16)\n", ""),
        ("from trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model = lora_model, args = SFTConfig(learning_rate "
         "= 2e-4, max_steps = 30))\ntrainer.train()\n", _SFT_DICTS),
    ])
    a = forensics.analyze(run)
    assert a.config.get("model.name_or_path") == "unsloth/Qwen2.5-0.5B-Instruct"
    assert a.run_profile.model_params == 500_000_000, a.run_profile.evidence
    assert a.run_profile.precision == "bf16", a.run_profile.evidence


def test_an_old_trl_ppo_trainer_built_with_its_config_first_trains_the_policy_not_the_sentiment_classifier(tmp_path):
    """Change 3 (`_model_handed`: `model=`, else the FIRST positional argument). TRL's classic gpt2-sentiment notebook
    (TRL < 0.12): `PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset)`, whose first positional argument
    is the PPOConfig. The policy lvwerra/gpt2-imdb is loaded with a value head, then its reference, then the
    sentiment classifier lvwerra/distilbert-imdb (AutoModelForSequenceClassification) that scores it. The tool takes
    `config` for the model handed, finds no loader under that name and falls back to the last loader before the
    trainer: it says the trained model is lvwerra/distilbert-imdb with a sequence-classification head. At 818a0e3
    (the first loader) the name was the policy's; 245309a's handed-name rule lost it. Right: the policy,
    lvwerra/gpt2-imdb (its head a value head, not the classifier's)."""
    ppo = "\n".join(str({"loss": 0.5, "objective/kl": 0.01 * s, "ppo/mean_scores": 0.1 * s, "learning_rate": 1.41e-5,
                         "epoch": s / 60}) for s in range(1, 31))
    run = ran_notebook(tmp_path / "run", "gpt2-sentiment.ipynb", [
        ("from trl import PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead\n"
         "from transformers import AutoModelForSequenceClassification\n"
         "config = PPOConfig(model_name=\"lvwerra/gpt2-imdb\", learning_rate=1.41e-5)\n"
         "model = AutoModelForCausalLMWithValueHead.from_pretrained(\"lvwerra/gpt2-imdb\")\n"
         "ref_model = AutoModelForCausalLMWithValueHead.from_pretrained(\"lvwerra/gpt2-imdb\")\n"
         "reward_model = AutoModelForSequenceClassification.from_pretrained(\"lvwerra/distilbert-imdb\")\n", ""),
        ("ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset)\n", ppo),
    ])
    a = forensics.analyze(run)
    assert a.config.get("model.name_or_path") == "lvwerra/gpt2-imdb"
    assert a.config.get("model.architectures") != ["AutoModelForSequenceClassification"]


def test_a_grpo_trainer_handed_its_model_by_name_trains_that_model_not_the_reward_model_loaded_beside_it(tmp_path):
    """Change 3 ("the model trained is the one handed to the first trainer"). TRL's documented GRPO pattern hands the
    model as a string: `GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=[score], ...)`, the reward
    function scoring with a reward model the notebook loads itself
    (Skywork/Skywork-Reward-Llama-3.1-8B-v0.2, AutoModelForSequenceClassification). `_model_handed` reads only a name,
    so the only loader is taken: the tool says the trained model is the 8B reward model (model_params 8B, a
    sequence-classification head). Right: the model handed to the trainer, Qwen/Qwen2.5-0.5B-Instruct (0.5B). (A gap
    in the new rule rather than a regression: the first loader was taken before it too.)"""
    rl = "\n".join(str({"loss": 0.0, "reward": round(0.2 + s / 60, 3), "reward_std": 0.3, "completion_length": 120,
                        "kl": 0.001 * s, "grad_norm": 0.4, "learning_rate": 5e-6, "epoch": s / 60})
                   for s in range(1, 31))
    run = ran_notebook(tmp_path / "run", "grpo.ipynb", [
        ("from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
         "rm = AutoModelForSequenceClassification.from_pretrained(\"Skywork/Skywork-Reward-Llama-3.1-8B-v0.2\", "
         "torch_dtype=torch.bfloat16)\n", ""),
        ("from trl import GRPOTrainer, GRPOConfig\ntrainer = GRPOTrainer(model=\"Qwen/Qwen2.5-0.5B-Instruct\", "
         "reward_funcs=[score], args=GRPOConfig(learning_rate=5e-6, bf16=True))\ntrainer.train()\n", rl),
    ])
    a = forensics.analyze(run)
    assert a.config.get("model.name_or_path") == "Qwen/Qwen2.5-0.5B-Instruct"
    assert a.run_profile.model_params != 8_000_000_000, a.run_profile.evidence


def test_an_unsloth_trainer_with_both_precision_flags_false_still_trains_in_mixed_precision(tmp_path):
    """Change 3 (`_unsloth_mixed_precision`, read only where neither flag is SET). Unsloth's patched trainer reads
    `use_bf16 = getattr(args, 'bf16', False)`, `use_fp16 = getattr(args, 'fp16', False)` and, where both are False
    (unless UNSLOTH_FORCE_FLOAT32 / UNSLOTH_MIXED_PRECISION say otherwise), sets `args.fp16 = float16; args.bf16 = not
    float16`: an explicit `fp16 = False, bf16 = False` is the same as leaving them out. A notebook on an A100
    (`Bfloat16 = TRUE`, dtype None) passing `SFTConfig(fp16 = False, bf16 = False, ...)`: the tool says precision fp32
    ("fp16 and bf16 both off"). Right: bf16, as for the same notebook without the two keywords."""
    run = ran_notebook(tmp_path / "run", "sft.ipynb", [
        ("from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(model_name = "
         "\"unsloth/Qwen2.5-0.5B\", dtype = None, load_in_4bit = True)\n", _banner("TRUE")),
        ("from trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model = model, args = SFTConfig(fp16 = False, "
         "bf16 = False, learning_rate = 2e-4, max_steps = 30))\ntrainer.train()\n", _SFT_DICTS),
    ])
    assert forensics.analyze(run).run_profile.precision == "bf16"
