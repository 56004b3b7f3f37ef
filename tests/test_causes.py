"""Each cause rule fires on its evidence and stays silent without it; infer_causes orders and caps them."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.analyzers import run_all
from forensics.causes import infer_causes
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.timeline import LogRecords, Timeline, build_timeline

NAN = math.nan


def timeline(**metrics: dict[int, float]) -> Timeline:
    rows = [(step, metric, value) for metric, points in metrics.items() for step, value in points.items()]
    rows.sort()
    frame = pd.DataFrame({"step": pd.Series([r[0] for r in rows], dtype="int64"), "metric": [r[1] for r in rows],
                          "value": pd.Series([r[2] for r in rows], dtype="float64"), "wall_time": NAN})
    return build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])


def config(**values) -> RunConfig:
    c = RunConfig()
    for key, value in values.items():
        c.add(key.replace("__", "."), value, "training_args.bin")
    return c


def error(kind="nonfinite_metric", step=10, metric="grad_norm") -> Finding:
    return Finding(kind=kind, severity="error", step=step, message=f"{kind} at {step}", metric=metric)


def checkpoint(step, blocks=(), tensors=(), stats=None) -> CheckpointInfo:
    ref = CheckpointRef(name=f"checkpoint-{step}", step=step, path=Path(f"/run/checkpoint-{step}"), files=())
    return CheckpointInfo(ref=ref, status="nonfinite" if blocks or tensors else "ok",
                          nonfinite_blocks=list(blocks), nonfinite_tensors=list(tensors), stats=stats)


def causes(cfg=None, tl=None, findings=(), checkpoints=(), **overrides):
    return infer_causes(cfg or RunConfig(), tl or Timeline.empty(), list(findings), list(checkpoints),
                        Thresholds(**overrides))


def by_id(found) -> dict:
    return {c.cause: c for c in found}


CONSTANT_LR = {s: 3e-4 for s in range(1, 21)}
NAN_GRAD = timeline(learning_rate=CONSTANT_LR, loss={s: 2.0 if s < 10 else 0.0 for s in range(1, 21)},
                    grad_norm={s: 1.0 if s < 10 else NAN for s in range(1, 21)})


# --- learning rate --------------------------------------------------------------------------

CLIMBING = timeline(learning_rate=CONSTANT_LR, loss={s: 2.0 for s in range(1, 21)},
                    grad_norm={s: 1.0 if s < 7 else 3.0 ** (s - 6) if s < 10 else NAN for s in range(1, 21)})


def test_lr_too_high_for_full_fine_tuning():
    """grad_norm climbing before the NaN is the precursor that makes the rate the likely cause (NAN_GRAD's flat
    grad_norm up to the NaN is a sudden break: there the rate is only possible)."""
    found = by_id(causes(config(learning_rate=3e-4, method="full"), CLIMBING, [error()]))
    lr = found["lr_too_high"]
    assert lr.confidence == "likely"
    assert by_id(causes(config(learning_rate=3e-4, method="full"), NAN_GRAD, [error()]))["lr_too_high"].confidence \
        == "possible"
    assert any("0.0003" in e for e in lr.evidence) and any("full fine-tuning" in e for e in lr.evidence)


def test_lr_fine_for_full_fine_tuning_is_silent():
    tl = timeline(learning_rate={1: 1e-5, 2: 1e-5}, grad_norm={1: 1.0, 2: NAN})
    assert "lr_too_high" not in by_id(causes(config(learning_rate=1e-5, method="full"), tl, [error()]))


@pytest.mark.parametrize("lr, fires", [(3e-4, False), (3e-3, True)])
def test_lr_limit_for_lora(lr, fires):
    found = by_id(causes(config(learning_rate=lr, method="lora"), NAN_GRAD, [error()]))
    assert ("lr_too_high" in found) is fires


def test_lr_unknown_method_is_only_possible():
    found = by_id(causes(RunConfig(), NAN_GRAD, [error()]))
    assert found["lr_too_high"].confidence == "possible"
    assert any("method unknown" in e for e in found["lr_too_high"].evidence)


def test_a_plain_sgd_scale_rate_with_no_optimizer_named_is_no_evidence_by_itself():
    """pytorch/examples' word-level RNN trains with plain SGD at lr 20: the Adam-family recipes do not judge it, so a
    sudden NaN under it is not put down to the rate as 'likely', and the advice gives both readings."""
    sgd = timeline(learning_rate={s: 20.0 for s in range(1, 21)}, loss={s: 5.0 if s < 10 else NAN for s in range(1, 21)})
    lr = by_id(causes(config(learning_rate=20, method="full"), sgd, [error(metric="loss")]))["lr_too_high"]
    assert lr.confidence == "possible"
    assert any("plain SGD" in e for e in lr.evidence) and "plain SGD" in lr.suggestion and "Adam" in lr.title


def test_the_same_rate_under_adamw_is_far_out_of_every_recipe():
    """Far out of every recipe, and said so; still only possible, since nothing in the log built up before the NaN
    ("likely" needs a precursor in the run's own metrics: day 11's review)."""
    sgd = timeline(learning_rate={s: 20.0 for s in range(1, 21)}, loss={s: 5.0 if s < 10 else NAN for s in range(1, 21)})
    lr = by_id(causes(config(learning_rate=20, method="full", optim="adamw_torch"), sgd,
                      [error(metric="loss")]))["lr_too_high"]
    assert lr.confidence == "possible" and not any("plain SGD" in e for e in lr.evidence)
    assert any("too far out for any recipe" in e for e in lr.evidence)


def test_a_pretraining_run_is_not_called_fine_tuning_in_the_lr_advice():
    from forensics.profile import RunProfile
    found = infer_causes(config(learning_rate=3e-3), NAN_GRAD, [error()], [], Thresholds(),
                         profile=RunProfile(method="full", objective="pretrain", model_params=124_000_000))
    lr = by_id(found)["lr_too_high"]
    assert "pre-training" in lr.title and "fine-tuning" not in lr.suggestion, (lr.title, lr.suggestion)


def test_lr_without_trouble_is_silent():
    healthy = timeline(learning_rate=CONSTANT_LR, loss={s: 2.0 - s / 100 for s in range(1, 21)})
    assert causes(config(learning_rate=3e-4, method="full"), healthy) == []


# --- warm-up and clipping -------------------------------------------------------------------

def test_no_warmup_fires_on_a_flat_start():
    found = by_id(causes(config(method="full"), NAN_GRAD, [error()]))
    assert found["no_warmup"].confidence == "possible"
    assert any("first logged step 1" in e for e in found["no_warmup"].evidence)


def test_no_warmup_silent_on_a_ramp():
    ramp = timeline(learning_rate={s: 3e-4 * min(1.0, s / 10) for s in range(1, 21)}, grad_norm={1: 1.0, 2: NAN})
    assert "no_warmup" not in by_id(causes(RunConfig(), ramp, [error()]))


def test_no_warmup_silent_when_configured():
    assert "no_warmup" not in by_id(causes(config(warmup_steps=100), NAN_GRAD, [error()]))


def test_no_clipping_fires():
    found = by_id(causes(config(max_grad_norm=0.0), NAN_GRAD, [error()]))
    assert "max_grad_norm=0" in found["no_clipping"].evidence[0]


def test_clipping_on_is_silent_but_cannot_help_with_nan():
    found = by_id(causes(config(max_grad_norm=1.0), NAN_GRAD, [error()]))
    assert "no_clipping" not in found
    assert "step 10" in found["clipping_cannot_help"].evidence[1]


def test_clipping_cannot_help_silent_with_finite_gradients():
    finite = timeline(grad_norm={1: 1.0, 2: 50.0}, loss={1: 2.0, 2: 9.0})
    found = by_id(causes(config(max_grad_norm=1.0), finite, [error("loss_spike", 2, "loss")]))
    assert "clipping_cannot_help" not in found


def test_deepspeed_clipping_is_the_one_in_force():
    cfg = config(max_grad_norm=1.0, ds__gradient_clipping=0.0)
    assert "no_clipping" in by_id(causes(cfg, NAN_GRAD, [error()]))


# --- precision ------------------------------------------------------------------------------

def test_fp16_overflow_likely_with_scale_collapse():
    cfg = config(fp16=True)
    cfg.add("state.loss_scale", 1.0, "checkpoint-20/scaler.pt")
    cause = by_id(causes(cfg, NAN_GRAD, [error()]))["fp16_overflow"]
    assert cause.confidence == "likely"
    assert any("checkpoint-20/scaler.pt" in e for e in cause.evidence)
    assert "bf16" in cause.suggestion


def test_fp16_overflow_names_near_limit_weights():
    stats = pd.DataFrame({"name": ["model.layers.0.mlp.down_proj.weight", "model.norm.weight"],
                          "absmax": [60000.0, 1.0]})
    ck = checkpoint(10, stats=stats)
    cause = by_id(causes(config(fp16=True), NAN_GRAD, [error()], [ck]))["fp16_overflow"]
    assert any("model.layers.0.mlp.down_proj.weight" in e for e in cause.evidence)
    assert not any("model.norm.weight" in e for e in cause.evidence)


@pytest.mark.parametrize("cfg", [config(bf16=True), config(fp16=False), RunConfig()])
def test_fp16_overflow_silent_without_fp16(cfg):
    assert "fp16_overflow" not in by_id(causes(cfg, NAN_GRAD, [error()]))


def test_deepspeed_fp32_communication_with_fp16():
    cfg = config(fp16=True, ds__fp16__enabled=True, ds__communication_data_type="fp32")
    spike = Finding("grad_norm_spike", "warning", 3, "spike", metric="grad_norm", evidence={"value": 3000.0})
    collapse = Finding("loss_collapse", "error", 5, "collapse", metric="loss")
    found = causes(cfg, timeline(loss={1: 2.0, 5: 0.0}, grad_norm={1: 1.0, 3: 3000.0, 5: 0.0}), [spike, collapse])
    assert found[0].cause == "deepspeed_precision_conflict" and found[0].confidence == "likely"
    assert any("communication_data_type='fp32'" in e for e in found[0].evidence)
    assert any("step 3" in e for e in found[0].evidence)


@pytest.mark.parametrize("cfg", [
    config(fp16=True, ds__fp16__enabled=True),                          # no communication_data_type
    config(ds__communication_data_type="fp32", ds__zero_optimization__stage=2),  # fp32 training: no conflict
    config(fp16=True, ds__fp16__enabled=True, ds__communication_data_type="fp16"),
    # Megatron-DeepSpeed's arguments: --bf16 and the zero_stage it prints for every run, no DeepSpeed config read
    config(bf16=True, ds__zero_optimization__stage=1),
])
def test_deepspeed_conflict_silent(cfg):
    assert "deepspeed_precision_conflict" not in by_id(causes(cfg, NAN_GRAD, [error()]))


@pytest.mark.parametrize("cfg, phrase", [
    (config(fp16=True, ds__fp16__enabled=False), "fp16=True"),
    (config(ds__fp16__enabled=True, ds__bf16__enabled=True), "both fp16 and bf16"),
    (config(bf16=True, ds__zero_optimization__stage=3, ds__train_micro_batch_size_per_gpu=4), "enables neither"),
])
def test_deepspeed_mixed_flags(cfg, phrase):
    cause = by_id(causes(cfg, NAN_GRAD, [error()]))["deepspeed_precision_conflict"]
    assert any(phrase in e for e in cause.evidence)


def test_qlora_double_quant_with_nan_grad_norm():
    cfg = config(quant__bnb_4bit_use_double_quant=True, quant__load_in_4bit=True, method="qlora", learning_rate=2e-4)
    found = causes(cfg, NAN_GRAD, [error()])
    assert found[0].cause == "qlora_double_quant" and found[0].confidence == "likely"
    assert any("step 10" in e for e in found[0].evidence)


@pytest.mark.parametrize("dq, tl", [(False, NAN_GRAD), (True, timeline(grad_norm={1: 1.0, 2: 2.0}, loss={1: 2.0, 2: 9.0}))])
def test_qlora_double_quant_silent(dq, tl):
    cfg = config(quant__bnb_4bit_use_double_quant=dq, method="qlora")
    assert "qlora_double_quant" not in by_id(causes(cfg, tl, [error("loss_spike", 2, "loss")]))


# --- what a 0.0 loss means --------------------------------------------------------------------

def test_masked_nan_loss_explained():
    cause = by_id(causes(config(logging_nan_inf_filter=True), NAN_GRAD, [error()]))["masked_nan_loss"]
    assert cause.confidence == "likely"
    assert "from step 10 (11 logged steps)" in cause.evidence[0]
    assert any("logging_nan_inf_filter=True" in e for e in cause.evidence)


def test_zero_loss_with_zero_grad_points_at_labels():
    tl = timeline(loss={1: 2.0, 2: 0.0, 3: 0.0}, grad_norm={1: 1.0, 2: 0.0, 3: 0.0})
    found = by_id(causes(RunConfig(), tl, [error("no_learning_signal", 2, "loss")]))
    assert "masked_nan_loss" not in found
    assert found["zero_loss_zero_grad"].confidence == "likely" and "labels" in found["zero_loss_zero_grad"].suggestion


def test_zero_loss_zero_grad_under_deepspeed_fp16_is_only_possible():
    tl = timeline(loss={1: 2.0, 2: 0.0}, grad_norm={1: 1.0, 2: 0.0})
    found = by_id(causes(config(fp16=True, ds__fp16__enabled=True), tl, [error("loss_collapse", 2, "loss")]))
    assert found["zero_loss_zero_grad"].confidence == "possible"


def test_zero_loss_silent_when_loss_is_real():
    tl = timeline(loss={1: 2.0, 2: 1.5}, grad_norm={1: 1.0, 2: 0.9})
    found = by_id(causes(RunConfig(), tl, [error("loss_spike", 2, "loss")]))
    assert "masked_nan_loss" not in found and "zero_loss_zero_grad" not in found


# --- where the damage is ----------------------------------------------------------------------

QWEN1_LATE = [f"transformer.h.{i}" for i in (21, 22, 23)]


def test_late_blocks_in_qwen1_names():
    cfg = config(model__num_hidden_layers=24)
    bad = checkpoint(200, QWEN1_LATE, [f"{b}.attn.c_attn.weight" for b in QWEN1_LATE])
    cause = by_id(causes(cfg, Timeline.empty(), [], [checkpoint(100), bad]))["late_blocks"]
    assert cause.confidence == "likely"
    assert "transformer.h.21-23: the last 3 of 24 blocks" in cause.evidence[1]
    assert "last good checkpoint-100" in cause.evidence[0]


@pytest.mark.parametrize("blocks, tensors", [
    (["model.layers.2", "model.layers.21"], []),                          # one early block too
    (["model.layers.22"], ["model.embed_tokens.weight", "model.layers.22.mlp.up_proj.weight"]),  # embeddings too
    ([f"model.layers.{i}" for i in range(24)], []),                       # everything
])
def test_late_blocks_silent(blocks, tensors):
    found = by_id(causes(config(model__num_hidden_layers=24), Timeline.empty(), [], [checkpoint(10, blocks, tensors)]))
    assert "late_blocks" not in found


def test_late_blocks_silent_on_a_model_too_small_to_have_late_blocks():
    bad = checkpoint(10, ["model.layers.1"], ["model.layers.1.mlp.up_proj.weight"])
    assert "late_blocks" not in by_id(causes(config(model__num_hidden_layers=2), Timeline.empty(), [], [bad]))


def test_late_blocks_counts_blocks_from_stats_without_config():
    stats = pd.DataFrame({"name": [f"model.layers.{i}.mlp.up_proj.weight" for i in range(8)], "absmax": 1.0})
    bad = checkpoint(10, ["model.layers.7"], ["model.layers.7.mlp.up_proj.weight"], stats=stats)
    cause = by_id(causes(RunConfig(), Timeline.empty(), [], [bad]))["late_blocks"]
    assert "the last 1 of 8 blocks" in cause.evidence[1]


def test_embedding_and_first_block_damage_named():
    bad = checkpoint(10, ["model.layers.0"], ["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"])
    found = by_id(causes(config(model__num_hidden_layers=24), Timeline.empty(), [], [bad]))
    assert "late_blocks" not in found
    assert "embeddings (model.embed_tokens.weight)" in found["early_blocks"].evidence[1]


def test_early_blocks_silent_in_the_middle():
    bad = checkpoint(10, ["model.layers.12"], ["model.layers.12.mlp.up_proj.weight"])
    assert "early_blocks" not in by_id(causes(config(model__num_hidden_layers=24), Timeline.empty(), [], [bad]))


# --- ordering and caps ------------------------------------------------------------------------

def test_likely_before_possible_and_rule_order():
    cfg = config(learning_rate=3e-4, method="full", max_grad_norm=0.0, fp16=True, ds__fp16__enabled=True,
                 ds__communication_data_type="fp32")
    found = causes(cfg, CLIMBING, [error()])
    ids = [c.cause for c in found]
    assert ids[:3] == ["deepspeed_precision_conflict", "fp16_overflow", "lr_too_high"]
    confidences = [c.confidence for c in found]
    assert confidences == sorted(confidences, key=lambda c: c != "likely")


def test_run_without_errors_gets_nothing_above_possible():
    warning = Finding("grad_norm_spike", "warning", 5, "recovered spike", metric="grad_norm")
    tl = timeline(learning_rate=CONSTANT_LR, grad_norm={s: 50.0 if s == 5 else 1.0 for s in range(1, 21)})
    found = causes(config(learning_rate=3e-4, method="full", max_grad_norm=0.0), tl, [warning])
    assert found and all(c.confidence == "possible" for c in found)


def test_no_config_still_explains_metrics_and_checkpoints():
    bad = checkpoint(20, ["model.layers.23"], ["model.layers.23.mlp.up_proj.weight"])
    stats = pd.DataFrame({"name": [f"model.layers.{i}.mlp.up_proj.weight" for i in range(24)], "absmax": 1.0})
    bad = replace(bad, stats=stats)
    found = by_id(causes(RunConfig(), NAN_GRAD, [error()], [bad]))
    assert {"masked_nan_loss", "late_blocks", "lr_too_high"} <= set(found)
    assert found["lr_too_high"].confidence == "possible"


def test_causes_are_json_ready():
    import json
    found = causes(config(learning_rate=3e-4, method="full"), NAN_GRAD, [error()])
    json.dumps([c.to_dict() for c in found])


# --- the rules read the facts the analyzers settled --------------------------------------------

def test_fp16_skipped_steps_on_a_healthy_run_are_not_blamed_on_quantization_or_clipping():
    steps = range(1, 200)
    tl = timeline(loss={s: 2.0 - s / 1000 for s in steps}, learning_rate={s: 1e-5 for s in steps},
                  grad_norm={s: math.inf if s in (2, 3) else 1.0 for s in steps})  # the loss scaler calibrating
    findings = run_all(tl, Thresholds())
    assert [(f.kind, f.severity) for f in findings] == [("skipped_steps", "warning")]
    cfg = config(max_grad_norm=1.0, fp16=True, quant__bnb_4bit_use_double_quant=True)
    found = by_id(causes(cfg, tl, findings))
    assert "qlora_double_quant" not in found and "clipping_cannot_help" not in found
    # the scaler did its job: no learning-rate, warm-up or clipping advice for skipped steps alone
    assert not {"lr_too_high", "no_warmup", "no_clipping"} & set(found) and "fp16_overflow" in found


def test_a_loss_of_zero_where_grad_norm_was_not_logged_is_no_masked_nan():
    tl = timeline(loss={10: 2.0, 20: 1.0, 30: 0.0}, grad_norm={10: 1.0, 20: 0.5})
    assert "masked_nan_loss" not in by_id(causes(tl=tl))


def test_a_bad_checkpoint_of_unknown_step_does_not_displace_the_first_bad_one():
    layers = [f"model.layers.{i}" for i in range(32)]
    final = CheckpointInfo(ref=CheckpointRef(name="final", step=None, path=Path("/run/final"), files=()),
                           status="nonfinite", nonfinite_blocks=layers, nonfinite_tensors=[f"{b}.mlp.w" for b in layers])
    ordered = [checkpoint(20), checkpoint(40, layers[30:], [f"{b}.mlp.w" for b in layers[30:]]), final]
    found = by_id(causes(config(model__num_hidden_layers=32), checkpoints=ordered))
    assert "checkpoint-40" in found["late_blocks"].evidence[0]


_CORPUS = Path(__file__).resolve().parent / "realworld"


def test_memorization_alone_gets_no_learning_rate_or_warm_up_cause():
    """GeoLLM (a real prefix-tuning run at LR 0.02 that memorized its data over 131 epochs): lowering the
    learning rate or warming it up is not the fix for memorization, so neither cause is offered."""
    a = forensics.analyze(_CORPUS / "AriesChen-UPC_GeoLLM")
    assert a.first_incident.kind == "memorization"
    assert not {"lr_too_high", "no_warmup"} & {c.cause for c in a.causes}


def test_an_unknown_method_rate_above_the_adapter_range_is_not_called_within_it():
    """Chaos-Economy (real GRPO, peak LR 4.9e-5, method unknown): above the adapter range for RL
    (2e-06 to 2e-05) but under its ceiling; the advice must not say the rate is within the range."""
    a = forensics.analyze(_CORPUS / "Rusheel86_Chaos-Economy")
    (lr,) = [c for c in a.causes if c.cause == "lr_too_high"]
    assert "is above the usual 2e-06 to 2e-05" in lr.suggestion and "is within the usual" not in lr.suggestion


def test_grpo_without_reward_spread_is_told_about_the_reward_not_about_masked_labels():
    """aaravarora01 (real TRL GRPO: frac_reward_zero_std 1.0 at 84 of 100 steps, grad_norm ~0.001, never
    exactly 0): the cause is the reward without spread; 'every label -100' would send the owner the wrong way."""
    a = forensics.analyze(_CORPUS / "aaravarora01_agent-memory-redteam")
    causes = [c.cause for c in a.causes]
    assert causes[0] == "no_reward_spread" and "zero_loss_zero_grad" not in causes


def test_a_healthy_grpo_log_with_zero_losses_is_not_told_its_labels_are_masked():
    """qwen3.5-4b-lora-grpo-telelogs (shared real GRPO log: loss 0.0 at 63 of 200 steps by construction,
    grad_norm 0.0 at 4 of them): the masked-labels cause fits SFT, never a GRPO loss."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "realworld"
    case = (shared if shared.is_dir() else Path("/work/shared/realworld")) / "qwen3.5-4b-lora-grpo-telelogs"
    if not case.is_dir():
        pytest.skip("../shared/realworld is not there")
    assert "zero_loss_zero_grad" not in [c.cause for c in forensics.analyze(case).causes]


def test_a_schedule_that_started_over_is_not_put_down_to_fp16_or_the_learning_rate():
    """marthinsurya/lab2-ID2223: fp16 on, the linear schedule ran out at step 60 and restarted: the scheduler's
    settings are the story, not an overflow (nothing overflowed) nor a rate too high."""
    restart = Finding(kind="lr_anomaly", severity="warning", step=65, message="ran out and started over",
                      metric="learning_rate", evidence={"started_over": True, "schedule_shape": True})
    found = by_id(causes(config(fp16=True, learning_rate=3e-4, method="qlora"),
                         timeline(learning_rate={5: 1.5e-4, 10: 3e-4, 60: 0.0, 65: 2.4e-4}), [restart]))
    assert "fp16_overflow" not in found and "lr_too_high" not in found
    jump = Finding(kind="lr_anomaly", severity="warning", step=65, message="jumps", metric="learning_rate",
                   evidence={"factor": 1000.0})
    # the control: a jump in a run whose gradients went NaN (an overflow's trace; fp16 being on is no evidence alone)
    assert "fp16_overflow" in by_id(causes(config(fp16=True), NAN_GRAD, [jump]))
    assert "fp16_overflow" not in by_id(causes(config(fp16=True), timeline(learning_rate={5: 1e-4}), [jump]))


def test_a_pre_training_run_is_judged_against_pre_training_rates():
    """liguodongiot/llm-action: a 1.3B Megatron-DeepSpeed pre-training at 3e-4 (GPT-3 1.3B: 2e-4, Llama 2 7B: 3e-4)
    must not be told a fine-tuning range of 1e-5 to 5e-5; 3e-3 is still too high for it."""
    from forensics.causes.lr_ranges import lr_range
    from forensics.profile import RunProfile

    profile = RunProfile(method="full", objective="pretrain", algorithm=None, model_params=1_345_523_712,
                         precision="fp16", framework="megatron", evidence={})
    assert lr_range("full", "pretrain", 1_345_523_712).describe() == "0.00012 to 0.0003"
    ok = infer_causes(config(learning_rate=3e-4), NAN_GRAD, [error()], [], Thresholds(), profile)
    assert "lr_too_high" not in by_id(ok)
    high = infer_causes(config(learning_rate=3e-3), timeline(learning_rate={s: 3e-3 for s in range(1, 21)}),
                        [error()], [], Thresholds(), profile)
    assert "lr_too_high" in by_id(high)


def test_a_learning_rate_logged_at_0_before_its_peak_is_no_evidence_of_a_missing_warm_up():
    """baby-llama2's console: lr 0.0000000 at step 0, 1e-4 at step 1000: the warm-up, if any, is in between."""
    tl = timeline(learning_rate={0: 0.0, 1000: 1e-4, 2000: 1e-4, 3000: 9.9e-5},
                  loss={0: 11.27, 1000: 6.27, 2000: 5.6, 3000: NAN})
    assert "no_warmup" not in by_id(causes(RunConfig(), tl, [error(step=3000, metric="loss")]))
    flat = timeline(learning_rate={1000: 1e-4, 2000: 1e-4, 3000: 9.9e-5}, loss={1000: 6.27, 2000: 5.6, 3000: NAN})
    assert "no_warmup" in by_id(causes(RunConfig(), flat, [error(step=3000, metric="loss")]))


@pytest.mark.parametrize("optim", ["sgd", "SGD", "prodigy", "dadapt_adam_lr1"])
def test_a_named_optimizer_whose_rate_is_on_another_scale_gets_no_adam_family_range(optim):
    """lr 20 under a named SGD (a word-level RNN's default), lr 1.0 under Prodigy: the recipe ranges do not apply."""
    tl = timeline(learning_rate={s: 20.0 for s in range(1, 21)}, loss={s: 5.0 if s < 10 else NAN for s in range(1, 21)})
    found = by_id(causes(config(learning_rate=20, method="full", optim=optim), tl, [error(metric="loss")]))
    assert "lr_too_high" not in found


def test_a_masked_nan_told_by_a_nan_eval_is_not_said_to_sit_beside_a_grad_norm(tmp_path):
    """The fp16 cause's evidence names what told the masked NaN: with no grad_norm logged, never 'next to a
    non-finite grad_norm'."""
    import forensics
    rows = [f"{{'loss': {2.5 - 0.05 * i:.4f}, 'learning_rate': 0.0002, 'epoch': {i / 20:.2f}}}" for i in range(1, 11)]
    rows += ["{'loss': 0.0, 'learning_rate': 0.0002, 'epoch': 0.55}",
             "{'eval_loss': nan, 'eval_runtime': 1.0, 'epoch': 0.55}"]
    args = "TrainingArguments(\n_n_gpu=1,\nfp16=True,\nlearning_rate=0.0002,\noutput_dir=out,\n)\n"
    (tmp_path / "train.log").write_text(args + "\n".join(rows) + "\n")
    a = forensics.analyze(tmp_path)
    lines = [e for c in a.causes for e in c.evidence]
    assert any("masked NaN loss; grad_norm was not logged" in e for e in lines), lines
    assert not any("non-finite grad_norm" in e for e in lines)
