"""Review day 5c: misreads of the second set of rules added on day 5 (grad_norm spike reaction by median and nats,
the trained model of a notebook, Unsloth's mixed precision, a hand-written loop's bare `reward`). Each test builds a
realistic run, says which change it targets, what the tool says and why that is wrong; each fails on the code as
reviewed (commit 2a3ffd8)."""
from __future__ import annotations

import json

import numpy as np

import forensics
from support.review_runs import ran_notebook


def _trainer_state(folder, rows):
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": rows[-1]["step"], "log_history": rows}))
    return folder


def _rows(loss, grad):
    return [{"step": 10 * (k + 1), "epoch": (k + 1) / 100, "loss": round(float(loss[k]), 4),
             "grad_norm": round(float(grad[k]), 4), "learning_rate": 2e-5} for k in range(len(loss))]


def _plateaued_sft(seed: int, start: float, level: float, grad_level: float, n: int = 200):
    """A LoRA SFT logged every 10 steps: the loss falls from `start` to `level` over its first 40 points, then holds
    (2% / 1.5% point noise); grad_norm about `grad_level` (10% noise), twice that over the first 10 points."""
    rng = np.random.default_rng(seed)
    noise = 0.02 if level > 1 else 0.015
    loss = np.r_[np.linspace(start, level, 40), np.full(n - 40, level)] * np.exp(rng.normal(0, noise, n))
    grad = grad_level * np.exp(rng.normal(0, 0.1, n))
    grad[:10] *= 2
    return loss, grad


# ---- change 1: grad_spike.py, the loss's reaction read from its median over the spike, in nats ------------------


def test_a_three_point_grad_norm_spike_whose_loss_jumped_at_its_first_point_is_no_heavy_tail(tmp_path):
    """Change 1 (`_loss_rose`: the loss's MEDIAN over the spike's stretch). A plateaued SFT (loss about 2.0, 2% point
    noise) whose grad_norm jumps to 12x its median for three logged points (12, 9, 7: not a lone jump and its echo,
    `_isolated_points` says so itself) while the loss jumps 1.3x (+0.6 nats, some 15x its point noise) at the first
    of them and is back at the next. The median of the loss over the spike's three points is the two calm ones, so
    the tool says "the loss did not react (2.0 its median over 3 points ...): the heavy tail of a steady run's
    grad_norm", makes the spike info and calls the run healthy. Before the change (the largest loss over the spike)
    it was a warning. The loss did react, at the spike itself: a recovered grad-norm spike the loss reacted to is a
    warning (VERDICTS.md); the median over a long storm is the right read, over a three-point spike it hides the
    reaction."""
    loss, grad = _plateaued_sft(seed=3, start=3.2, level=2.0, grad_level=1.0)
    i = 150
    loss[i - 1] = max(loss[i - 1], loss[i - 20] + 0.01)  # at its plateau (the last loss before not under the first)
    grad[i:i + 3] = [12.0, 9.0, 7.0]
    loss[i] = 1.3 * loss[i - 1]
    a = forensics.analyze(_trainer_state(tmp_path / "run", _rows(loss, grad)), check_checkpoints=False)
    spike = next(f for f in a.findings if f.kind == "grad_norm_spike")
    assert spike.severity == "warning", spike.message
    assert a.status == "warning", [f.message for f in a.findings]


def test_a_lone_grad_norm_spike_that_lifts_a_loss_of_0_3_by_30_percent_is_a_reaction(tmp_path):
    """Change 1 (`loss_spike_min_rise`, 0.1 nats, now asked of the reaction as well as 1.25x). A plateaued SFT at loss
    0.30 (1.5% point noise, about 0.005) with one 12x grad_norm jump at which the loss stands at 0.39: 1.3x its
    median and some 18x its point noise, +0.09 nats. The tool says "the loss did not react (0.39 at it, against a
    recent median of 0.3002)", makes the spike info and calls the run healthy; before the change it was a warning.
    The nats floor was made for a loss near zero (0.012 -> 0.0198 on a loss with 20% noise); at 0.3 a 30% jump far
    outside the loss's own noise is a reaction, and the message's own numbers contradict "did not react"."""
    loss, grad = _plateaued_sft(seed=4, start=1.6, level=0.3, grad_level=0.5)
    i = 150
    loss[i - 1] = max(loss[i - 1], loss[i - 20] + 0.001)
    grad[i] = 6.0
    loss[i] = 0.39
    a = forensics.analyze(_trainer_state(tmp_path / "run", _rows(loss, grad)), check_checkpoints=False)
    spike = next(f for f in a.findings if f.kind == "grad_norm_spike")
    assert spike.severity == "warning", spike.message
    assert a.status == "warning", [f.message for f in a.findings]


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


# ---- change 4: pretrain_lines.py / profile.py, a bare `reward` says RL -------------------------------------------


def test_a_reward_model_loop_that_prints_its_mean_score_as_reward_is_no_rl_run(tmp_path):
    """Change 4. A hand-written reward-model training loop (config.json: LlamaForSequenceClassification with one
    label) printing `step=N loss=... acc=... reward=...`, its `reward` the mean score the model gives the chosen
    answers (a scale with no goal); the pairwise loss falls from ln 2 (0.68) to 0.35 and the pair accuracy rises from
    0.5 to 0.84. The bare `reward` is now read and returns objective "rl" before the one-label head at ln 2 is
    looked at: the tool says objective rl and warns no_learning_evidence ("the reward did not rise ... nothing shows
    the policy improved"). Without the `reward=` field the same run is a reward model and healthy. Right: objective
    reward, healthy: a reward model's score has no direction to rise in."""
    rng = np.random.default_rng(7)
    run = tmp_path / "run"
    run.mkdir()
    lines = ["__main__ - INFO - Loaded 12000 preference pairs"]
    for s in range(1, 101):
        loss = 0.35 + 0.343 * np.exp(-s / 25) + rng.normal(0, 0.01)
        acc = 0.84 - 0.34 * np.exp(-s / 25) + rng.normal(0, 0.02)
        score = 0.1 * np.sin(s / 7) + rng.normal(0, 0.3)
        lines.append(f"__main__ - INFO - step={s * 10} loss={loss:.4f} acc={acc:.4f} reward={score:.4f}")
    (run / "train.log").write_text("\n".join(lines) + "\n")
    (run / "config.json").write_text(json.dumps({"architectures": ["LlamaForSequenceClassification"],
                                                 "id2label": {"0": "LABEL_0"}, "model_type": "llama"}))
    a = forensics.analyze(run, check_checkpoints=False)
    assert a.run_profile.objective == "reward", a.run_profile.evidence
    assert a.status == "healthy", [f.message for f in a.findings]
