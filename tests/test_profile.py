"""The run profile (what kind of run) and advice that fits it.

Profiles are checked on real public logs where the log's own content says the answer (TRL metric
names, the PEFT banner, the framework's log format) and on runs the real Trainer made; advice is
checked against the rule of issue 11: a LoRA run never gets a full fine-tuning rate, an unknown
method is said to be unknown with both ranges, "likely" needs a precursor, and a run that
recovered gets no resume advice.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import forensics
from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.ingest.param_count import estimate_params, exact_params
from forensics.profile import RunProfile
from forensics.timeline import LogRecords, Timeline, build_timeline

import pandas as pd

REALWORLD = Path(__file__).resolve().parents[1].parent / "shared" / "realworld"


def _real(case: str):
    path = REALWORLD / case
    if not path.is_dir():
        pytest.skip(f"{path} not present (../shared/realworld sits beside the checkout in CI)")
    return forensics.analyze(path).run_profile


def test_trl_metric_names_say_dpo_and_grpo():
    dpo, grpo = _real("gemma-2b-it-lora-prompt-recovery"), _real("qwen3.5-4b-lora-grpo-telelogs")
    assert (dpo.objective, dpo.algorithm, dpo.framework) == ("preference", "dpo", "trl")
    assert (grpo.objective, grpo.algorithm, grpo.framework) == ("rl", "grpo", "trl")
    assert "rewards/margins" in dpo.evidence["objective"] and "completion_length" in grpo.evidence["objective"]


def test_the_peft_banner_gives_the_model_size():
    p = _real("qwen1.5-0.5b-lora-muice-stdout")
    assert p.model_params == 467_772_416 and "banner" in p.evidence["model_params"]


@pytest.mark.parametrize("case, method, params", [
    ("swift-deepseek-r1-qwen3-8b-lora", "lora", 8_212_558_800),  # 'PeftModelForCausalLM: 8212.5588M Params (21.8235M ...'
    ("swift-internvl2-full-ft-long", "full", 2_205_754_400),  # '... (2205.7544M Trainable [100.0000%])'
    ("llama3.2-1b-webui-training-pro-notes", "lora", 1_235_814_400),  # '... All params: ... (Model: 1,235,814,400)'
])
def test_the_logs_own_parameter_counts_beat_sizes_in_folder_names(case, method, params):
    p = _real(case)
    assert (p.method, p.model_params) == (method, params) and "banner" in p.evidence["model_params"]


def test_unsloth_s_trainable_count_against_the_model_size_says_lora():
    p = _real("llama3-8b-unsloth-mobility-stdout")  # 'Number of trainable parameters = 41,943,040', an 8B model
    assert p.method == "lora" and "41,943,040 trainable" in p.evidence["method"]


@pytest.mark.parametrize("case, framework", [("lf-qwen2.5-7b-lora-medical", "llamafactory"),
                                             ("swift-deepseek-r1-qwen3-8b-lora", "swift"),
                                             ("mistral-7b-lora-sft", "hf_trainer")])
def test_the_log_format_gives_the_framework(case, framework):
    assert _real(case).framework == framework


def _profile_of(folder: Path, history: list[dict]):
    """The profile of a run folder holding only a trainer_state.json with this log_history."""
    folder.mkdir(exist_ok=True)
    state = {"global_step": history[-1]["step"], "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state))
    return forensics.analyze(folder).run_profile


def test_unknown_stays_unknown(tmp_path):
    p = _profile_of(tmp_path / "run", [{"step": s, "loss": 3.0 - s / 10} for s in range(1, 11)])
    assert (p.method, p.objective, p.precision, p.model_params) == ("unknown", "unknown", "unknown", None)
    assert set(p.unknown) == {"method", "objective", "precision", "model_params"}
    assert forensics.analyze(tmp_path / "run").to_dict()["run_profile"]["method"] == "unknown"


def test_a_loss_scaler_skipping_updates_tells_fp16(tmp_path):
    history = [{"step": s, "loss": 3.0 - s / 100, "learning_rate": 1e-4 * min(s, 10) / 10,
                "grad_norm": float("inf") if s in (1, 2) else 1.0} for s in range(1, 41)]
    p = _profile_of(tmp_path / "run", history)
    assert p.precision == "fp16" and "loss scaler" in p.evidence["precision"]
    assert _profile_of(tmp_path / "run", [dict(e, grad_norm=1.0) for e in history]).precision == "unknown"


def test_verl_console_lines_say_sft_or_rl(tmp_path):
    """verl's SFT trainer logs train/loss; its RL trainers actor/pg_loss and critic/score/mean (our `reward`),
    for GRPO and PPO alike, so the algorithm stays unsaid."""
    sft, rl = tmp_path / "sft", tmp_path / "rl"
    for folder, fields in ((sft, "train/loss:{loss}"), (rl, "actor/pg_loss:0.01 - critic/score/mean:{score}")):
        folder.mkdir()
        (folder / "train.log").write_text("".join(
            f"step:{s} - " + fields.format(loss=2 - s / 50, score=s / 50) + " - actor/grad_norm:0.5\n"
            for s in range(1, 31)))
    p = forensics.analyze(sft).run_profile
    assert (p.objective, p.framework) == ("sft", "verl") and "SFT trainer" in p.evidence["objective"]
    p = forensics.analyze(rl).run_profile
    assert (p.objective, p.algorithm, p.framework) == ("rl", None, "verl")


@pytest.mark.parametrize("labels, first_loss, objective", [(1, 0.6914, "reward"), (2, 0.6914, "classification"),
                                                              (1, 2.3, "unknown")])
def test_a_one_label_head_whose_loss_starts_at_ln_2_is_a_reward_model(tmp_path, labels, first_loss, objective):
    """A pairwise reward model (a sequence classifier with one score) starts at -log sigmoid(0) = ln 2; a
    two-label classifier at chance starts there too (a classifier: its head picks a label), and a one-score regressor
    starts anywhere (no class to pick: unknown)."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "distilbert", "architectures": [
        "DistilBertForSequenceClassification"], "id2label": {str(i): f"LABEL_{i}" for i in range(labels)}}))
    p = _profile_of(folder, [{"step": 30 * k, "loss": first_loss - k / 100} for k in range(1, 21)])
    assert p.objective == objective
    if objective == "reward":
        assert "num_labels 1" in p.evidence["objective"] and "ln 2" in p.evidence["objective"]


@pytest.mark.parametrize("cls, objective, algorithm", [
    ("UnslothSFTTrainer.UnslothSFTConfig", "sft", None), ("trl.trainer.sft_config.SFTConfig", "sft", None),
    ("UnslothGRPOTrainer.UnslothGRPOConfig", "rl", "grpo"), ("trl.trainer.dpo_config.DPOConfig", "preference", "dpo"),
    ("trl.trainer.reward_config.RewardConfig", "reward", None)])
def test_trls_trainer_arguments_class_says_the_objective_and_framework(tmp_path, cls, objective, algorithm):
    """training_args.bin pickles the arguments' class: TRL's SFTConfig, GRPOConfig, ... and Unsloth's
    subclasses of them (yongshuaiy/LLMs-final: UnslothSFTConfig, read before as a plain HF Trainer run), whose
    framework is Unsloth, as its banner says in a console (../shared/realworld's judge names an Unsloth run so)."""
    history = [{"step": s, "loss": 2.0 - s / 100} for s in range(1, 11)]
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=pd.DataFrame(
        {"step": [e["step"] for e in history], "metric": "loss", "value": [e["loss"] for e in history],
         "wall_time": float("nan")}))])
    config = RunConfig()
    config.add("training_args_class", cls, "training_args.bin")
    from forensics.profile import run_profile

    p = run_profile(None, config, timeline, [])
    framework = "unsloth" if cls.startswith("Unsloth") else "trl"
    assert (p.objective, p.algorithm, p.framework) == (objective, algorithm, framework)
    assert cls.rsplit(".", 1)[-1] in p.evidence["framework"]


def test_the_plain_trainer_arguments_class_says_nothing_of_trl():
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("training_args_class", "transformers.training_args.TrainingArguments", "training_args.bin")
    p = run_profile(None, config, Timeline.empty(), [])
    assert (p.objective, p.framework) == ("unknown", "unknown")


@pytest.mark.parametrize("key, value, framework", [
    ("training_args_class", "llamafactory.hparams.training_args.TrainingArguments", "llamafactory"),  # nico-qrnta
    ("training_args_class", "llmtuner.hparams.training_args.TrainingArguments", "llamafactory"),
    ("training_args_class", "swift.trainers.arguments.Seq2SeqTrainingArguments", "swift"),
    ("output_dir", "/mnt/workspace/LLaMA-Factory/savesnew", "llamafactory"),  # GU-DY/chattest
    ("output_dir", "/home/me/llama-factory-notes/out", "unknown"),  # a folder that only holds the name
    ("output_dir", "saves/chatglm3-6b/lora/sft-ruozhiba", "llamafactory"),  # nick-code-lab: its saves/ pattern
    ("output_dir", "/data/saves/qwen/checkpoints/run1", "unknown"),  # saves/ without a finetuning type
])
def test_a_frameworks_own_arguments_class_or_checkout_says_the_framework(key, value, framework):
    from forensics.profile import run_profile

    config = RunConfig()
    config.add(key, value, "training_args.bin")
    assert run_profile(None, config, Timeline.empty(), []).framework == framework


def test_a_summed_loss_with_its_perplexity_beside_it_is_read_per_token(tmp_path):
    """halilibrahimavsar/mybabyai logs loss = 16 x ln(Perplex): the per-token start at ln(vocabulary) is
    in the perplexity."""
    history = [{"step": s, "loss": 16 * (10.87 - s / 20), "Perplex": math.exp(10.87 - s / 20)} for s in range(10, 210, 10)]
    p = _profile_of(tmp_path / "run", history)
    assert p.objective == "pretrain" and "per token" in p.evidence["objective"]


def test_trls_sft_metrics_in_a_deepspeed_console_say_trl_not_deepspeed(tmp_path):
    """Tensionteng/twenty-four-point-game: a DeepSpeed-launched console whose dict lines carry TRL SFTTrainer's
    mean_token_accuracy, a ZeRO-2 config beside it: DeepSpeed is the engine, TRL the trainer."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "ds_zero2.json").write_text(json.dumps({"zero_optimization": {"stage": 2}, "bf16": {"enabled": True}}))
    lines = [str({"loss": 1.2 - k / 20, "grad_norm": 0.5, "learning_rate": 1e-5, "num_tokens": 1000.0 * k,
                  "mean_token_accuracy": 0.7 + k / 100, "epoch": k / 10}) for k in range(1, 11)]
    (run / "sft.log").write_text("\n".join(lines) + "\n")
    p = forensics.analyze(run).run_profile
    assert (p.framework, p.objective) == ("trl", "sft") and "mean_token_accuracy" in p.evidence["framework"]
    # without TRL's names, the dicts are the Trainer's own print (its ProgressCallback); DeepSpeed is its engine
    (run / "sft.log").write_text("\n".join(line.replace("'mean_token_accuracy'", "'acc'") for line in lines) + "\n")
    p = forensics.analyze(run).run_profile
    assert p.framework == "hf_trainer" and "printed log dicts" in p.evidence["framework"]
    (run / "sft.log").write_text("step 1 | loss 2.0\nstep 2 | loss 1.9\nstep 3 | loss 1.8\nstep 4 | loss 1.7\n")
    assert forensics.analyze(run).run_profile.framework == "deepspeed"  # a hand-written loop under DeepSpeed
    (run / "sft.log").write_text("".join(str({"epoch": 0, "step": s, "loss": 2 - s / 10}) + "\n" for s in range(1, 9)))
    assert forensics.analyze(run).run_profile.framework == "deepspeed"  # its own dicts, with a step: not the Trainer's


def test_a_first_loss_at_about_ln_vocab_that_falls_is_training_from_scratch(tmp_path):
    p = _profile_of(tmp_path / "run", [{"step": s, "loss": 10.83 - s / 10} for s in range(1, 21)])
    assert p.objective == "pretrain" and "ln(vocabulary" in p.evidence["objective"]
    fine_tune = [{"step": s, "loss": 2.1 - s / 100} for s in range(1, 21)]
    assert _profile_of(tmp_path / "run", fine_tune).objective == "unknown"
    wobble = [{"step": s, "loss": 10.4 + (0.1 if s % 2 else -0.1)} for s in range(1, 21)]  # stuck at ln(vocab)
    assert _profile_of(tmp_path / "run", wobble).objective == "unknown"


def test_a_mixture_of_experts_config_counts_every_expert(tmp_path):
    # gpt-oss-20b's config.json (20.9B parameters by its model card): 24 layers of 32 experts
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({
        "model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 24, "intermediate_size": 2880,
        "num_attention_heads": 64, "num_key_value_heads": 8, "num_local_experts": 32, "vocab_size": 201088,
        "tie_word_embeddings": False}))
    p = _profile_of(run, [{"step": s, "loss": 2.0 - s / 100} for s in range(1, 11)])
    assert p.model_params == pytest.approx(20.9e9, rel=0.05)


@pytest.mark.parametrize("name, config, total", [
    # Qwen1.5-MoE-A2.7B's config.json (14.3B parameters by its model card): 60 experts and a shared expert
    ("qwen2_moe", {"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24, "intermediate_size": 5632,
                   "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
                   "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
                   "tie_word_embeddings": False}, 14.3e9),
    # DeepSeek-V2-Lite's config.json (15.7B): 64 routed and 2 shared experts, the first block dense
    ("deepseek_v2", {"model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27,
                     "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64,
                     "n_shared_experts": 2, "first_k_dense_replace": 1, "num_attention_heads": 16,
                     "num_key_value_heads": 16, "vocab_size": 102400, "tie_word_embeddings": False}, 15.7e9),
])
def test_a_mixture_of_experts_counts_its_shared_experts_and_dense_blocks(tmp_path, name, config, total):
    run = tmp_path / name
    run.mkdir()
    (run / "config.json").write_text(json.dumps(config))
    p = _profile_of(run, [{"step": s, "loss": 2.0 - s / 100} for s in range(1, 11)])
    assert p.model_params == pytest.approx(total, rel=0.02)


def test_a_real_trainer_lora_run_is_profiled_from_its_adapter_files(lora_run):
    path, facts = lora_run
    p = forensics.analyze(path, workers=1).run_profile
    assert p.method == "lora" and "adapter" in p.evidence["method"]
    assert p.framework == "hf_trainer"
    assert p.precision == ("bf16" if facts.training_args.get("bf16") else "fp32")


# ---------------------------------------------------------------- advice that fits the profile

def _timeline(loss: dict, grad: dict, lr: dict):
    rows = [(s, m, v) for m, d in (("loss", loss), ("grad_norm", grad), ("learning_rate", lr)) for s, v in d.items()]
    frame = pd.DataFrame(sorted(rows), columns=["step", "metric", "value"]).assign(wall_time=float("nan"))
    return build_timeline([LogRecords("trainer_state.json", "trainer_state", frame)])


STEPS = range(1, 21)
CALM_THEN_NAN = dict(loss={s: 2.0 - s / 100 if s < 15 else 0.0 for s in STEPS},
                     grad={s: 1.0 if s < 15 else float("nan") for s in STEPS})
NAN_AT_15 = [Finding("nonfinite_metric", "error", 15, "grad_norm is NaN", metric="grad_norm")]


def _causes(lr: float, profile: RunProfile, findings=NAN_AT_15, **series):
    tl = _timeline(series.get("loss", CALM_THEN_NAN["loss"]), series.get("grad", CALM_THEN_NAN["grad"]),
                   {s: lr for s in STEPS})
    return {c.cause: c for c in infer_causes(RunConfig(), tl, findings, [], Thresholds(), profile)}


def test_a_lora_run_is_never_told_a_full_fine_tuning_rate():
    found = _causes(5e-3, RunProfile(method="lora", model_params=7_000_000_000))
    lr = found["lr_too_high"]
    assert "1e-4" in lr.suggestion or "0.0001" in lr.suggestion
    assert "full fine-tuning" not in lr.suggestion and "1e-05" not in lr.suggestion
    assert "lr_too_high" not in _causes(3e-4, RunProfile(method="lora", model_params=7_000_000_000))


def test_an_unknown_method_is_said_and_both_ranges_are_given():
    lr = _causes(2e-3, RunProfile())["lr_too_high"]
    assert "method is unknown" in lr.suggestion and "LoRA" in lr.suggestion and "full fine-tuning" in lr.suggestion
    assert any("method unknown" in e for e in lr.evidence)


def test_a_sudden_break_is_not_blamed_on_the_learning_rate():
    found = _causes(5e-5, RunProfile(method="full", model_params=7_000_000_000))
    assert found["lr_too_high"].confidence == "possible"  # 2.5x the range but no precursor in the logs
    assert found["sudden_break"].cause == "sudden_break" and "data" in found["sudden_break"].title


def test_a_rising_grad_norm_makes_the_learning_rate_likely():
    rising = {s: 1.0 if s < 11 else 2.0 ** (s - 9) for s in range(1, 15)} | {s: float("nan") for s in range(15, 21)}
    found = _causes(5e-5, RunProfile(method="full", model_params=7_000_000_000), grad=rising)
    assert found["lr_too_high"].confidence == "likely" and "sudden_break" not in found


def test_a_run_that_recovered_gets_no_resume_advice():
    spike = [Finding("grad_norm_spike", "warning", 10, "grad_norm spiked and recovered", metric="grad_norm")]
    calm = {s: 1.0 for s in STEPS}
    found = _causes(5e-3, RunProfile(method="full"), findings=spike, loss={s: 2.0 - s / 50 for s in STEPS},
                    grad=calm)
    assert found and all("resume" not in c.suggestion.lower() for c in found.values())


@pytest.mark.parametrize("losses, objective, method", [
    ([8.46, 7.69, 7.21, 6.97, 6.92, 6.58, 6.39] + [4.0] * 10 + [1.0] * 4, "pretrain", "full"),  # a gradual fall
    ([8.34, 1.26, 0.50, 0.43] + [0.42] * 4, "unknown", "unknown"),  # a fine-tune's broken start falls at once
    ([7.64, 6.87, 6.49, 6.30, 6.15] + [5.9] * 5, "unknown", "unknown"),  # not yet 40% down: no telling
    # a bad template start logged every step: falls over a few dozen steps of a long log, then an ordinary SFT loss
    ([8.4 * 0.93 ** k for k in range(30)] + [1.0 - k / 1000 for k in range(300)], "unknown", "unknown"),
])
def test_a_first_loss_from_7_nats_that_falls_gradually_is_a_model_trained_from_scratch(tmp_path, losses, objective,
                                                                                        method):
    """A first point logged after some steps (Jayant-Guru-Shrivastava's GPT-2: 8.46 at step 10) has already left
    ln(vocabulary); a fine-tune of a trained model never starts that high unless its start is broken, and then
    the loss falls at once (anonymousgigachad/llm-training: 8.34 -> 1.26 in ten steps)."""
    p = _profile_of(tmp_path / "run", [{"step": 10 * (i + 1), "loss": v} for i, v in enumerate(losses)])
    assert (p.objective, p.method) == (objective, method)
    if method == "full":
        assert "random weights" in p.evidence["method"]


def test_a_run_that_trains_its_own_tokenizer_trains_its_model_from_scratch(tmp_path):
    """B4rtekk1/CGPT's console: `Training BPE tokenizer on 1024 MiB ...` before its first step (logged at 5000)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("Training BPE tokenizer on 1024 MiB (full input will be tokenized)...\n" + "".join(
        f"Training [===] {s / 600:.1f}% {s}/60000 | 4.62 it/s | loss={4 - s / 30000:.4f}\n" for s in range(5000, 60000, 5000)))
    p = forensics.analyze(run).run_profile
    assert (p.objective, p.method) == ("pretrain", "full") and "own tokenizer" in p.evidence["objective"]
    (run / "train.log").write_text("Loading the tokenizer from Qwen/Qwen2.5-0.5B\n" + "".join(
        f"Training [===] {s / 600:.1f}% {s}/60000 | 4.62 it/s | loss={4 - s / 30000:.4f}\n" for s in range(5000, 60000, 5000)))
    assert forensics.analyze(run).run_profile.objective == "unknown"


def test_an_adapter_is_never_a_model_trained_from_scratch_and_prompt_tuning_is_peft(tmp_path):
    """brockhager/allie-ai: a LoRA on TinyLlama-Chat whose first loss is 7.39; rqchao/cs182-project: prompt tuning."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8,
                                                         "base_model_name_or_path": "TinyLlama/TinyLlama-1.1B-Chat-v1.0"}))
    p = _profile_of(run, [{"step": 10 * k, "loss": 7.4 - 0.3 * k} for k in range(1, 21)])
    assert (p.method, p.objective) == ("lora", "unknown")
    (run / "adapter_config.json").write_text(json.dumps({"peft_type": "PROMPT_TUNING", "num_virtual_tokens": 20}))
    p = _profile_of(run, [{"step": 10 * k, "loss": 4.0 - 0.1 * k} for k in range(1, 21)])
    assert p.method == "peft" and "PROMPT_TUNING" in p.evidence["method"]


def _adapter_run(tmp_path: Path, task_type: str, history: list[dict]) -> RunProfile:
    (tmp_path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "task_type": task_type,
                                                              "base_model_name_or_path": "Qwen/Qwen2.5-7B-Instruct"}))
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 40, "log_history": history}))
    return forensics.analyze(tmp_path).run_profile


def test_a_causal_lm_adapter_on_its_language_model_loss_is_supervised_fine_tuning(tmp_path):
    """huloujun / EthanFeng-coder / juanmb88: plain TrainingArguments, a CAUSAL_LM LoRA, a loss and nothing else."""
    sft = _adapter_run(tmp_path, "CAUSAL_LM", [{"step": s, "loss": 2.0 - s / 100, "epoch": s / 40} for s in (10, 20, 30, 40)])
    assert sft.objective == "sft" and "CAUSAL_LM" in sft.evidence["objective"]


def test_a_classifier_adapter_or_a_preference_log_is_not_called_sft(tmp_path):
    (tmp_path / "cls").mkdir(), (tmp_path / "dpo").mkdir()
    cls = _adapter_run(tmp_path / "cls", "SEQ_CLS", [{"step": s, "loss": 0.7 - s / 100} for s in (10, 20, 30, 40)])
    assert cls.objective == "classification"  # (a SEQ_CLS adapter's head picks a label: no language model's loss)
    dpo = _adapter_run(tmp_path / "dpo", "CAUSAL_LM", [{"step": s, "loss": 0.69 - s / 1000, "rewards/margins": s / 100,
                                                        "rewards/chosen": 0.1, "logps/chosen": -50.0} for s in (10, 20, 30, 40)])
    assert (dpo.objective, dpo.algorithm) == ("preference", "dpo")


def test_a_dpo_name_on_a_language_models_loss_is_not_the_objective(tmp_path):
    """kashishpadhiar11/dpo: the repository is named dpo, the run is a plain Trainer at ln 50257 = 10.82."""
    run = tmp_path / "dpo-experiments"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 100, "log_history": [
        {"step": s, "loss": 10.82 + (0.004 if s % 20 else -0.004), "epoch": s / 100} for s in range(10, 110, 10)]}))
    profile = forensics.analyze(run).run_profile
    assert profile.objective == "unknown" and profile.framework == "hf_trainer"
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 100, "log_history": [
        {"step": s, "loss": 0.69 - s / 1000, "epoch": s / 100} for s in range(10, 110, 10)]}))
    assert forensics.analyze(run).run_profile.objective == "preference"  # a loss from ln 2: the name holds


def test_trl_sftconfigs_own_fields_in_the_tensorboard_args_say_trl(tmp_path):
    """aayushjoshi-12 / agomaa1212002 / slakshnarasimhan: TensorBoard 'args' text of an SFTConfig (packing,
    dataset_text_field: fields TrainingArguments does not have); plain TrainingArguments stay hf_trainer."""
    from torch.utils.tensorboard import SummaryWriter
    for name, extra, expected in (("sft", {"packing": False, "dataset_text_field": "text"}, "trl"), ("plain", {}, "hf_trainer")):
        run = tmp_path / name
        writer = SummaryWriter(str(run / "runs" / "x"))
        writer.add_text("args", json.dumps({"output_dir": "out", "learning_rate": 2e-4, "per_device_train_batch_size": 2,
                                            "fp16": True, **extra}))
        for step in range(1, 30):
            writer.add_scalar("train/loss", 2.0 - step / 30, step)
        writer.close()
        assert forensics.analyze(run).run_profile.framework == expected, name


@pytest.mark.parametrize("folder, method", [("clora-commonsense", "lora"), ("dora_r16", "lora"), ("adalora", "lora"),
                                            ("pandora-run", "unknown"), ("adorable", "unknown")])
def test_a_variant_of_low_rank_adapters_named_by_the_run_folder_says_its_method(tmp_path, folder, method):
    """OddFunction0205's `clora-` run (CLoRA: LoRA with an orthogonality loss) names its method only in its name; a
    word that merely holds the letters (pandora) says nothing."""
    run = tmp_path / folder
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 100, "log_history": [
        {"step": s, "loss": 2.0 - s / 200, "epoch": s / 100} for s in range(10, 110, 10)]}))
    assert forensics.analyze(run).run_profile.method == method


def test_a_gpt_neox_config_is_counted_exactly():
    """arbordreams/tokalign-baseline's 1.4B GPT-NeoX: biases and norms included, the head apart from the embedding
    (1,426,878,464; transformers' own count on the meta device)."""
    config = RunConfig()
    for key, value in {"model_type": "gpt_neox", "vocab_size": 151646, "hidden_size": 2048, "num_hidden_layers": 16,
                       "intermediate_size": 8192, "attention_bias": True, "tie_word_embeddings": False}.items():
        config.add(f"model.{key}", value, "config.json")
    assert exact_params(config) == 1_426_878_464


_LLAMA_3_8B = {"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "num_hidden_layers": 32,
               "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
               "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False}


@pytest.mark.parametrize("model, expected", [
    (_LLAMA_3_8B, 8_030_261_248),  # NecromancerCodex_hohyun-site_llama_ko: its index's bf16 bytes / 2
    ({"model_type": "mistral", "vocab_size": 32000, "hidden_size": 4096, "num_hidden_layers": 32,
      "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8}, 7_241_732_096),  # deadkali-hat
    ({**_LLAMA_3_8B, "vocab_size": 32000, "num_key_value_heads": 32, "intermediate_size": 11008}, 6_738_415_616),
])
def test_a_llama_or_mistral_config_is_counted_with_its_norms(model, expected):
    """Llama-3-8B, Mistral-7B and Llama-2-7B as transformers counts them: the estimate left out the two RMSNorm weight
    vectors of each block and the final norm (65 x 4,096 = 266,240 of an 8B)."""
    config = RunConfig()
    for key, value in model.items():
        config.add(f"model.{key}", value, "config.json")
    assert estimate_params(config) == expected


def test_a_qwen2_config_is_not_counted_as_a_llama():
    """Qwen2 biases its q, k and v projections whatever its config says: not the Llama layout, left to the estimate
    (norms left out)."""
    config = RunConfig()
    for key, value in {**_LLAMA_3_8B, "model_type": "qwen2"}.items():
        config.add(f"model.{key}", value, "config.json")
    assert estimate_params(config) == 8_030_261_248 - 65 * 4096


def test_a_peft_banners_count_outranks_a_llama_configs_count(tmp_path):
    """LzZzZx328_finetune_LLM (judged 6,929,104,896): PEFT's `all params`, the adapter's weights included, is the count
    the run printed; the config's count of the base ranks under it."""
    (tmp_path / "config.json").write_text(json.dumps(_LLAMA_3_8B))
    lines = ["trainable params: 20,971,520 || all params: 8,051,232,768 || trainable%: 0.2605"]
    lines += [f"{{'loss': {2.5 - s / 40:.4f}, 'grad_norm': 1.0, 'learning_rate': 0.0002, 'epoch': {s / 20}}}"
              for s in range(1, 21)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.model_params == 8_051_232_768


@pytest.mark.parametrize("said, method", [("[3/5] Loading model with 4-bit quantization...", "qlora"),
                                          ("BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4')", "qlora"),
                                          ("Loading unsloth/llama-3-8b-bnb-4bit", "qlora"),
                                          ("Loading model in bfloat16...", "peft")])
def test_a_console_that_says_its_base_was_loaded_in_4_bits_makes_its_adapter_qlora(tmp_path, said, method):
    """Ishihara-Masabumi/Llama_SFT: a PEFT banner (an adapter) and '[3/5] Loading model with 4-bit quantization...'."""
    lines = [said, "trainable params: 12,156,928 || all params: 3,224,906,752 || trainable%: 0.3770"]
    lines += [f"{{'loss': {3.0 - s / 20:.4f}, 'grad_norm': 1.0, 'learning_rate': 0.0002, 'epoch': {s / 20}}}"
              for s in range(1, 21)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.method == method


def test_an_objective_word_in_the_base_models_path_is_not_the_runs_objective():
    """XueyangFeng/ECPO: the base lies in /data/pretrain_dir/Llama-3.1; the run trains a reward model on it."""
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("model._name_or_path", "/data/pretrain_dir/Llama-3.1", "config.json")
    assert run_profile(None, config, Timeline.empty(), []).objective == "unknown"
    config.add("output_dir", "saves/llama3/pretrain", "training_args.bin")
    assert run_profile(None, config, Timeline.empty(), []).objective == "pretrain"


def test_llamafactorys_value_head_lines_make_a_run_without_rl_metrics_a_reward_model(tmp_path):
    lines = ["[INFO|2024-12-14 11:00:08] llamafactory.model.model_utils.valuehead:157 >> Provided path (/x/sft) does "
             "not contain value head weights: /x/sft/value_head.bin."]
    lines += [f"{{'loss': {0.73 + 0.01 * (s % 3):.4f}, 'grad_norm': 12.0, 'learning_rate': 1e-4, 'epoch': {s / 20}}}"
              for s in range(1, 21)]
    (tmp_path / "nohup.out").write_text("\n".join(lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.objective == "reward"


@pytest.mark.parametrize("said", ["Namespace(model='gpt2', use_qlora=False, lr=5e-05)", "Full fine-tuning (no QLoRA)",
                                  "Loading the model without 4-bit quantization"])
def test_a_console_that_says_it_did_not_use_4_bits_is_not_qlora(tmp_path, said):
    """Review of this session: `use_qlora=False` and 'no QLoRA' were read as the base loaded in 4 bits."""
    lines = [said] + [f"{{'loss': {3.0 - s / 20:.4f}, 'grad_norm': 1.0, 'learning_rate': 0.0002, 'epoch': {s / 20}}}"
                      for s in range(1, 21)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert forensics.analyze(tmp_path).run_profile.method != "qlora"


def test_a_trainers_model_card_beside_a_trl_preference_log_leaves_the_framework_trl(tmp_path):
    """Before TRL 0.12 a DPO run's card was the Trainer's (`### Training results`): TRL's metric names still say trl."""
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 50, "log_history": [
        {"step": s, "loss": 0.69 - s / 200, "rewards/chosen": s / 100, "rewards/rejected": -s / 100,
         "rewards/margins": s / 50, "rewards/accuracies": 0.5 + s / 200, "epoch": s / 50} for s in range(5, 55, 5)]}))
    (tmp_path / "README.md").write_text("### Training results\n\n| Training Loss | Epoch | Step | Validation Loss |\n"
                                        "|:---:|:---:|:---:|:---:|\n| 0.5 | 1.0 | 50 | 0.55 |\n")
    assert forensics.analyze(tmp_path).run_profile.framework == "trl"


@pytest.mark.parametrize("name, params", [("stabilityai/stablelm-2-1_6b", 1_600_000_000),
                                          ("stabilityai/stablelm-zephyr-3b", 3_000_000_000),
                                          ("Qwen/Qwen1.5-0.5B-Chat", 500_000_000),
                                          ("runs/llama_7b_lora", 7_000_000_000)])
def test_a_size_in_the_models_name_is_read_with_an_underscore_as_its_decimal_point(name, params):
    """maxim-saplin/finetuning (batch AI1): StableLM's `stablelm-2-1_6b` was read as a 6B model."""
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("model._name_or_path", name, "config.json")
    assert run_profile(None, config, Timeline.empty(), []).model_params == params


def test_underscores_standing_for_every_separator_are_no_decimal_point():
    """`Llama_3_1_8b` (a notebook's file name) is Llama 3.1 8B, not a 1.8B model; `gemma3_1B` is Gemma 3 1B."""
    from forensics.profile import run_profile

    for name, params in (("Llama_3_1_8b_+_Unsloth_2x_faster_finetuning", 8_000_000_000), ("gemma3_1B", 1_000_000_000)):
        config = RunConfig()
        config.add("model._name_or_path", name, "config.json")
        assert run_profile(None, config, Timeline.empty(), []).model_params == params, name


def test_a_family_name_ending_in_a_versioned_familys_name_keeps_its_decimal_size():
    """Review of this session: `tinyllama-1_1b` is TinyLlama 1.1B (the `llama-` of a versioned family ends the name)."""
    from forensics.profile import run_profile

    config = RunConfig()
    config.add("model._name_or_path", "TinyLlama/tinyllama-1_1b", "config.json")
    assert run_profile(None, config, Timeline.empty(), []).model_params == 1_100_000_000


@pytest.mark.parametrize("names, algorithm", [
    (("rewards/margins", "rewards/chosen", "logps/chosen", "nll_loss"), None),  # DPO with rpo_alpha, or CPO / SimPO
    (("rewards/margins", "rewards/chosen", "logps/chosen"), "dpo"),
    (("rewards/margins", "rewards/chosen", "log_odds_ratio", "log_odds_chosen", "nll_loss"), "orpo"),
])
def test_orpo_is_told_by_its_odds_ratio_terms_not_by_an_nll_loss_a_dpo_or_cpo_logs_too(names, algorithm):
    from forensics.profile import run_profile

    steps = list(range(1, 11))
    frame = pd.DataFrame({"step": steps * (len(names) + 1), "metric": ["loss"] * 10 + [n for n in names for _ in steps],
                          "value": [0.6] * (10 * (len(names) + 1)), "wall_time": float("nan")})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])
    assert run_profile(None, RunConfig(), timeline, []).algorithm == algorithm


@pytest.mark.parametrize("args, objective", [
    ({"task_type": "causal_lm", "use_chat_template": True, "train_type": "lora"}, "sft"),  # `swift sft`
    ({"task_type": "causal_lm", "use_chat_template": False, "loss_scale": "all", "train_type": "lora"}, "pretrain"),
    ({"task_type": "seq_cls", "use_chat_template": True, "train_type": "lora"}, "unknown"),  # a classifier
    ({"task_type": "causal_lm", "train_type": "lora"}, "unknown"),  # no use_chat_template: neither is said
])
def test_an_ms_swift_args_json_without_rlhf_type_says_sft_or_pt(tmp_path, args, objective):
    """cho104's Ovis2.5 LoRA (tests/realworld): ms-swift's args.json of a `swift sft` run has no rlhf_type, task_type
    causal_lm and use_chat_template true; `swift pt` differs by use_chat_template false (ms-swift's PretrainArguments)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "args.json").write_text(json.dumps(args))
    rows = [{"loss": 1.5 - s / 100, "grad_norm": 1.0, "learning_rate": 1e-4, "epoch": s / 20,
             "global_step/max_steps": f"{s}/20", "memory(GiB)": 20.0} for s in range(1, 21)]
    (run / "logging.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert forensics.analyze(run).run_profile.objective == objective


def test_a_biogpt_config_counts_a_plain_mlp_and_a_tied_head():
    """microsoft/biogpt (Bhattars1_MediChat-1.0's config.json) is published as 347M: two MLP matrices and an output
    layer that shares the word embeddings, not the gated three and a separate head (489M)."""
    config = RunConfig()
    for key, value in {"model_type": "biogpt", "hidden_size": 1024, "num_hidden_layers": 24, "intermediate_size": 4096,
                       "num_attention_heads": 16, "vocab_size": 42384}.items():
        config.add(f"model.{key}", value, "config.json")
    assert 340e6 < estimate_params(config) < 350e6


def _config_of(model: dict) -> RunConfig:
    config = RunConfig()
    for key, value in model.items():
        config.add(f"model.{key}", value, "config.json")
    return config


_GLM_LARGE = {"model_type": "glm", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
              "vocab_size": 50048, "block_position_encoding": True, "max_sequence_length": 1024}


def test_the_first_glms_config_counts_a_plain_mlp_and_a_tied_head():
    """ZhipuAI/glm-large-chinese (136dsd_a2's config.json: num_layers 24, hidden 1024, vocab 50,048), published as
    335M: GLM's MLP is two GELU matrices and its output layer is the word embeddings; counted gated and untied it was
    505M."""
    assert 335e6 < estimate_params(_config_of(_GLM_LARGE)) < 335e6 * 1.1


def test_glm4s_transformers_config_keeps_its_gated_mlp():
    """The guard: GLM-4's transformers config (THUDM/glm-4-9b-hf) is model_type glm too, with a gated MLP and an
    untied head, and no block_position_encoding."""
    glm4 = {k: v for k, v in _GLM_LARGE.items() if k != "block_position_encoding"}
    glm4 = {**glm4, "intermediate_size": 4096}
    h, v, layers = 1024, 50048, 24
    assert estimate_params(_config_of(glm4)) == layers * (4 * h * h + 3 * h * 4096) + 2 * v * h
