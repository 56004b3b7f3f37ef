"""Adversarial review of the rules added on 2026-11-26 (after 14:00): each test builds an input a real run plausibly
leaves on disk, runs the tool on it and asserts the right reading. Every test here FAILS on the code it was written
against (15cf9c0); its docstring names the change it targets, the input, what the tool says and why that is wrong."""
from __future__ import annotations

import json
import math
import random

import forensics
from tests.support.review_runs import training_notebook


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _trainer_state(folder, rows, **files):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": rows[-1]["step"], "log_history": rows}))
    for name, text in files.items():
        (folder / name.replace("__", ".")).write_text(text)
    return folder


# ---- change 5 (pair_term_memorized) with change 3 (args.json's rpo_alpha) -------------------------------------------


def test_an_ms_swift_orpo_run_is_not_judged_on_the_dpo_rpo_alpha_its_args_json_lists(tmp_path):
    """Changes 3 and 5. ms-swift 3.x's RLHFArguments declares `rpo_alpha: float = 1.` for every rlhf_type, and
    args.json dumps every argument, so an ORPO run's args.json says rpo_alpha 1.0 though ORPO never uses it. TRL's
    ORPO logs nll_loss and loss = nll_loss + beta x (-log sigmoid(log_odds)): `loss - rpo_alpha x nll_loss` is the
    odds-ratio term already scaled by beta 0.1 (0.069 at chance). Input: 60 steps over 3 epochs, log-odds rising 0 -> 4,
    nll 1.6 -> 1.1, no eval. The tool says warning, memorization from step 41 ("the pair term ... is under 0.01 over
    every pass"), and healthy once rpo_alpha is taken out of args.json. Wrong: the pairs are ranked by a log-odds of
    about 3, far from separated; the check reads a beta-scaled term against a DPO threshold, on a weight the run did
    not use. Right: healthy (the rule only for a DPO, rlhf_type dpo)."""
    run = tmp_path / "run"
    run.mkdir()
    rows = []
    for s in range(1, 61):
        odds, nll = 4.0 * s / 60, 1.6 - 0.5 * s / 60
        rows.append({"loss": nll + 0.1 * math.log1p(math.exp(-odds)), "nll_loss": nll,
                     "log_odds_ratio": -math.log1p(math.exp(-odds)), "log_odds_chosen": odds,
                     "rewards/chosen": -0.1 + 0.0125 * odds, "rewards/rejected": -0.1 - 0.05 * odds,
                     "rewards/accuracies": min(1.0, 0.5 + s / 60), "rewards/margins": 0.06 * odds,
                     "logps/chosen": -100 + 5 * s / 60, "logps/rejected": -110 - 20 * s / 60,
                     "grad_norm": 3.0 - s / 60, "learning_rate": 5e-6, "epoch": round(3 * s / 60, 4),
                     "global_step/max_steps": f"{s}/60"})
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "args.json").write_text(json.dumps({"rlhf_type": "orpo", "beta": 0.1, "rpo_alpha": 1.0, "cpo_alpha": 1.0,
                                               "task_type": "causal_lm", "train_type": "lora"}))
    a = _analyze(run)
    assert a.status == "healthy", [(f.kind, f.step, f.message[:160]) for f in a.findings]


# ---- change 4 (detect_rl_gradient_gone) ------------------------------------------------------------------------------


def _grpo_rows(seed, late):
    random.seed(seed)
    rows = []
    for s in range(1, 101):
        rows.append({"step": s, "loss": 0.0, "learning_rate": 1e-6, "completions/mean_length": 180.0,
                     "epoch": s / 100, **late(s)})
    return rows


def test_a_grpo_run_that_solved_its_reward_is_not_broken_when_the_gradient_goes_to_zero(tmp_path):
    """Change 4. TRL GRPO (beta 0, its default since 0.19: no KL gradient), one prompt x 8 completions a step, logged
    every step: the accuracy reward rises 0.3 -> 0.95 over 40 steps; from there 90% of prompts are solved by every
    completion, so those steps' advantages are all 0 and grad_norm is exactly 0 (55 of the last 60 points; the other 5
    are groups that still differ, reward 0.5-0.875, grad_norm 0.3). Before the change the tool said warning,
    reward_saturated at 41 ("The policy learned to earn this reward ... no spread left"), which is right. Now it says
    broken, no_learning_signal error at 41 ("the policy stopped learning ... a collapsed policy ... restart from a
    checkpoint saved before it"), beside that same reward_saturated finding, and adds the cause zero_loss_zero_grad
    ("Check labels and masks: every label -100"). A policy at the reward's top is usable and its run learned; the
    advice would throw the trained policy away. Right: warning, first incident reward_saturated, no error."""
    def late(s):
        if s <= 40:
            return {"reward": 0.3 + 0.65 * s / 40 + random.uniform(-0.05, 0.05), "grad_norm": 0.4 + random.uniform(0, 0.3),
                    "reward_std": 0.3, "frac_reward_zero_std": 0.2 + 0.6 * s / 40}
        solved = random.random() < 0.9
        reward = 1.0 if solved else random.choice([0.5, 0.625, 0.75, 0.875])
        return {"reward": reward, "rewards/accuracy_reward/mean": reward, "grad_norm": 0.0 if solved else 0.3,
                "reward_std": 0.0 if solved else 0.3, "frac_reward_zero_std": 1.0 if solved else 0.0}
    a = _analyze(_trainer_state(tmp_path / "run", _grpo_rows(0, late)))
    assert a.status == "warning", [(f.kind, f.severity, f.step) for f in a.findings]
    assert a.first_incident.kind == "reward_saturated"
    assert "zero_loss_zero_grad" not in {c.cause for c in a.causes}


def test_a_zero_grad_norm_beside_groups_that_differ_is_not_read_as_every_advantage_zero(tmp_path):
    """Change 4. A GRPO run resumed at step 41 under a DeepSpeed ZeRO-3 release that logs grad_norm as 0.0: grad_norm
    0.5-0.8 to step 40, exactly 0 at every point after; the reward flat at about 0.6 throughout (a plateau), with
    frac_reward_zero_std 0.1 and reward_std 0.35 logged at every step: 90% of the groups scored their completions
    differently, so the advantages were not 0 and a GRPO gradient cannot be exactly 0 (the logged norm is what is
    wrong). The tool says broken, no_learning_signal error at 41: "a zero gradient means every advantage was 0, each
    group's completions scored alike", which the run's own frac_reward_zero_std contradicts (and adds the cause
    "Check labels and masks: every label -100"). Before the change: warning (no_learning_evidence, reward_decline).
    Right: no no_learning_signal error read from a zero grad_norm the reward spread contradicts."""
    def late(s):
        return {"reward": 0.62 + random.uniform(-0.08, 0.08), "reward_std": 0.35, "frac_reward_zero_std": 0.1,
                "grad_norm": 0.5 + random.uniform(0, 0.3) if s <= 40 else 0.0}
    a = _analyze(_trainer_state(tmp_path / "run", _grpo_rows(1, late)))
    assert not [f for f in a.findings if f.kind == "no_learning_signal" and f.severity == "error"], \
        [(f.kind, f.severity, f.step, f.message[:120]) for f in a.findings]


# ---- change 6 (precision.py: "Nothing to change for these alone") ----------------------------------------------------


def test_fp16_skips_at_one_step_in_six_are_not_told_there_is_nothing_to_change(tmp_path):
    """Change 6. An fp16 LoRA (LLaMA-Factory training_args.yaml fp16: true), 200 steps logged every step, grad_norm
    Inf with a finite loss at every sixth step (33 skips, each alone, the learning rate not advancing there), the loss
    still falling. The tool's skipped_steps finding counts them (33 isolated steps) and fp16_overflow now advises
    "Nothing to change for these alone: the fp16 loss scaler skips an update that overflows ... If skips come often
    or in runs ... train in bf16". Here they do come often: one update in six thrown away, a scaler that halves its
    scale every six steps and never regrows (growth_interval 2000) is not calibrating but overflowing for good.
    Before the change the advice was bf16. Right: the bf16 advice, not "Nothing to change", for skips this frequent."""
    rows, done = [], 0
    bad = set(range(5, 200, 6))
    for s in range(1, 201):
        done += s not in bad
        rows.append({"step": s, "loss": round(2.5 - s / 200 + 0.05 * math.sin(s), 4),
                     "grad_norm": float("inf") if s in bad else 1.2, "learning_rate": 2e-5 * min(1, done / 10),
                     "epoch": s / 200})
    run = _trainer_state(tmp_path / "run", rows, training_args__yaml="stage: sft\nfinetuning_type: lora\nfp16: true\n"
                         "learning_rate: 2.0e-5\nmax_grad_norm: 1.0\nlogging_steps: 1\n")
    a = _analyze(run)
    assert a.first_incident.kind == "skipped_steps" and a.run_profile.precision == "fp16"
    fp16 = {c.cause: c for c in a.causes}["fp16_overflow"]
    assert "Nothing to change" not in fp16.suggestion, fp16.suggestion


# ---- change 8 (review-advice5: the rate judged is the one in force before the first trouble) -------------------------


def test_an_early_recovered_spike_does_not_hide_the_rate_a_later_divergence_ran_at(tmp_path):
    """Change 8 (causes/evidence.py Facts.first_unstable, peak_lr). A LoRA at learning_rate 3e-3 (15x the 1e-4 to 2e-4
    of LoRA recipes), warm-up over 500 steps, logged every 5: one grad_norm spike at step 25 (40x, back to 1 at the next
    point; the rate then 1.5e-4), then from step 705, at the full 3e-3, the loss diverges (1.9 -> 24) with grad_norm
    climbing to 105. The tool says broken (divergence at 705) and now gives no cause at all: the recovered spike at 25
    is taken as "the trouble", the rate in force then (1.5e-4) is in range, and the configured 3e-3 is "not reached by
    then". Without the spike at 25, the same run gets lr_too_high (likely), as it did before the change. Right: the
    divergence that broke the run is judged at the rate it ran at: lr_too_high."""
    rows = []
    for s in range(5, 1001, 5):
        loss, grad = 2.2 - 0.4 * s / 1000, 1.0
        if s == 25:
            loss, grad = 6.5, 40.0
        if s >= 700:
            loss, grad = 1.9 * (1 + (s - 700) / 25), 5.0 + (s - 700)
        rows.append({"step": s, "loss": round(loss, 4), "grad_norm": grad,
                     "learning_rate": 3e-3 * min(1.0, s / 500), "epoch": s / 1000})
    run = _trainer_state(tmp_path / "run", rows, training_args__yaml="stage: sft\nfinetuning_type: lora\nbf16: true\n"
                         "learning_rate: 3.0e-3\nwarmup_steps: 500\nmax_grad_norm: 1.0\n")
    a = _analyze(run)
    assert a.status == "broken"
    assert "lr_too_high" in {c.cause for c in a.causes}, [(c.cause, c.evidence) for c in a.causes]


# ---- change 3 (ms-swift args.json -> stage) --------------------------------------------------------------------------


def test_an_ms_swift_sft_with_the_chat_template_off_is_not_pre_training(tmp_path):
    """Change 3. `swift sft --use_chat_template false` on a base model (Qwen2.5-7B, LoRA): ms-swift's generation
    template for plain prompt/response data; args.json says use_chat_template false and loss_scale 'default' (the loss
    on the responses only). `swift pt` differs from it by loss_scale 'all' as well (PretrainArguments), which the rule
    does not look at. The tool says objective pretrain ("stage pt (args.json)"). Right: not pre-training; a run that
    trains on responses only, with the chat template off, is supervised fine-tuning."""
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"loss": round(2.1 - 0.8 * s / 40, 4), "token_acc": 0.55 + 0.2 * s / 40, "grad_norm": 1.1,
             "learning_rate": 1e-4, "epoch": s / 40, "global_step/max_steps": f"{s * 5}/200"} for s in range(1, 41)]
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "args.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-7B", "train_type": "lora", "task_type": "causal_lm",
                                               "torch_dtype": "bfloat16", "use_chat_template": False,
                                               "loss_scale": "default"}))
    profile = _analyze(run).run_profile
    assert profile.objective != "pretrain", profile.evidence.get("objective")


# ---- change 7 (stdout.py: Unsloth's float32 lines) -------------------------------------------------------------------


def test_unsloth_float32_for_another_model_in_the_notebook_is_not_the_runs_precision(tmp_path):
    """Change 7. A Colab notebook on a T4: its first cell loads Gemma-3-270M to try it (Unsloth prints "Using float16
    precision for gemma3 won't work! Using float32."), the next loads Llama-3.2-1B with FastLanguageModel, and the
    SFTTrainer trains that with Unsloth's usual `fp16=not is_bf16_supported(), bf16=is_bf16_supported()` (fp16 on a
    T4). The tool says precision fp32 ("fp16 and bf16 both off (... gemma3 won't work! Using float32.)"); before the
    change it said unknown. The line is about a model the notebook did not train. Right: not fp32."""
    folder = training_notebook(tmp_path / "run", [
        "from unsloth import FastModel\nmodel, tok = FastModel.from_pretrained('unsloth/gemma-3-270m-it', "
        "load_in_4bit=False)\nprint(model.generate('hi'))",
        "del model\nfrom unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained("
        "'unsloth/Llama-3.2-1B-Instruct', dtype=None, load_in_4bit=True)",
        "from unsloth import is_bf16_supported\nfrom trl import SFTTrainer, SFTConfig\ntrainer = SFTTrainer(model=model, "
        "tokenizer=tokenizer, train_dataset=ds, args=SFTConfig(per_device_train_batch_size=2, learning_rate=2e-4, "
        "fp16=not is_bf16_supported(), bf16=is_bf16_supported(), max_steps=30, logging_steps=1, output_dir='outputs'))"
        "\ntrainer.train()",
    ])
    nb = json.loads((folder / "train.ipynb").read_text())
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text":
                                  "==((====))==  Unsloth 2025.3.19: Fast Gemma3 patching. Transformers: 4.50.0.\n"
                                  "   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n"
                                  "Unsloth: Using float16 precision for gemma3 won't work! Using float32.\n"}]
    (folder / "train.ipynb").write_text(json.dumps(nb))
    profile = _analyze(folder).run_profile
    assert profile.precision != "fp32", profile.evidence.get("precision")
