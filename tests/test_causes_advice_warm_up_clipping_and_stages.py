"""Tests of the causes' advice (causes/): warm-up, clipping, GRPO advantages, double quant, a
projector stage.

From the adversarial review of the causes' advice on the real corpus, day 6: each test stands for real runs named in
its docstring."""
from __future__ import annotations

import json
import math

import forensics
from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, error, timeline


NAN = math.nan


def _trainer_state(folder, rows, **state):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": rows[-1]["step"],
                                                           **state}))
    return folder


# ---- the learning-rate advice does not tell a run to do what it already did -----------------------------------------


def _warmed_up_then_nan():
    """A rate warmed up from 5e-5 to 5e-4 over the first 20 steps, then NaN at step 40 (clipping at 1.0)."""
    steps = range(2, 42, 2)
    return timeline(learning_rate={s: 5e-4 * min(1.0, s / 20) for s in steps},
                    loss={s: 1.0 if s < 40 else 0.0 for s in steps},
                    grad_norm={s: 0.3 * (1 + s / 10) if s < 40 else NAN for s in steps})


def test_a_run_that_warmed_up_is_not_told_to_warm_up():
    """facebookresearch crystal-text-llm issue 6 (the rate warmed up from 5e-5 to 5e-4), Rusheel86's GRPO (1e-5 ->
    4.9e-5 over 25 steps), ccccai239's QLoRA DPO (100 warm-up steps to 5e-4) and FPT-VVU's stage 1 (warmup_ratio 0.03,
    still warming up at the spike): the learning-rate cause said "warm up over the first 3-10% of steps" / "Either way
    warm up". The run's own log or config shows a warm-up: the advice keeps it rather than asking for one."""
    tl = _warmed_up_then_nan()
    no_rate = timeline(grad_norm={s: 1.0 if s < 40 else NAN for s in range(2, 42, 2)})
    for cfg, log in ((config(method="full"), tl), (config(), tl),
                     (config(method="qlora", warmup_steps=10, learning_rate=1e-3), no_rate)):
        lr = by_id(causes(cfg, log, [error(step=40)]))["lr_too_high"]
        assert "warm up over" not in lr.suggestion.lower() and "either way warm up" not in lr.suggestion.lower(), \
            lr.suggestion
        assert "keep the warm-up" in lr.suggestion
    unwarmed = timeline(learning_rate={s: 5e-4 for s in range(2, 42, 2)}, grad_norm={s: 1.0 if s < 40 else NAN
                                                                                    for s in range(2, 42, 2)})
    assert "warm up over" in by_id(causes(config(method="full"), unwarmed, [error(step=40)]))["lr_too_high"].suggestion


def test_a_run_that_clipped_is_not_told_to_clip_at_the_same_norm():
    """srinath-manda's GRPO (max_grad_norm 1.0 in training_args.bin), FPT-VVU's stage 1 (max_grad_norm 1.0): the cause
    said "clip with max_grad_norm=1.0", what the run already did. The advice says clipping was on at that norm."""
    tl = _warmed_up_then_nan()
    lr = by_id(causes(config(method="full", max_grad_norm=1.0), tl, [error(step=40)]))["lr_too_high"]
    assert "clip with max_grad_norm" not in lr.suggestion, lr.suggestion
    assert "max_grad_norm=1" in lr.suggestion  # says the norm it ran with
    # a looser norm is still told the usual one, where the gradient grew before its NaN (out of a steady gradient
    # clipping is no fix: it cannot act on a NaN norm)
    steps = range(2, 42, 2)
    grew = timeline(learning_rate={s: 5e-4 * min(1.0, s / 20) for s in steps}, loss={s: 1.0 if s < 40 else 0.0
                                                                                    for s in steps},
                    grad_norm={s: 0.3 if s < 32 else 30.0 if s < 40 else NAN for s in steps})
    loose = by_id(causes(config(method="full", max_grad_norm=5.0), grew, [error(step=40)]))["lr_too_high"]
    assert "max_grad_norm=1.0" in loose.suggestion


# ---- the rate judged is the one a configured warm-up had reached by the trouble -------------------------------------


def test_a_configured_peak_a_configured_warm_up_had_not_reached_is_not_judged():
    """A-Mayank's QLoRA notebook (learning_rate 1e-3 with warmup_steps 100 in an 80-step run, no rate logged, the NaN
    by step 50): the tool said "Learning rate 0.001 too high for QLoRA", but a linear warm-up over 100 steps had the
    rate at 5e-4 at most by step 50, within what adapter runs use. The configured peak is judged only where reached."""
    tl = timeline(loss={50: 0.0}, eval_loss={50: NAN})
    masked = Finding("masked_nan_loss", "error", 50, "loss 0.0 beside a NaN eval", metric="loss")
    found = by_id(causes(config(method="qlora", learning_rate=1e-3, warmup_steps=100), tl, [masked]))
    assert "lr_too_high" not in found, found["lr_too_high"].evidence
    reached = by_id(causes(config(method="qlora", learning_rate=1e-3, warmup_steps=10), tl, [masked]))
    assert "0.001" in reached["lr_too_high"].title


# ---- a missing warm-up is not the cause of trouble long after a warm-up would have ended -----------------------------


def _calm_then_nan(at, steps=100):
    return timeline(learning_rate={s: 5e-7 for s in range(1, steps + 1)},
                    loss={s: 0.72 if s < at else 0.0 for s in range(1, steps + 1)},
                    grad_norm={s: 0.096 if s < at else NAN for s in range(1, steps + 1)})


def test_no_warm_up_is_not_blamed_for_a_break_after_the_warm_up_window():
    """aleudework/fine-tune-models-exp (max_steps 100, warmup 0, grad_norm flat at 0.096 for 42 steps, NaN at step
    43), srinath-manda's GRPO (max_steps 500, the reward falling back from step 320): the tool said "No learning-rate
    warm-up (possible): warm the learning rate up over the first 3-10% of steps". A warm-up over the first 10 (50)
    steps would not have changed the rate in force at step 43 (320), after a calm stretch: no cause there."""
    later = by_id(causes(config(max_steps=100, warmup_steps=0), _calm_then_nan(43), [error(step=43)]))
    assert "no_warmup" not in later
    early = by_id(causes(config(max_steps=100, warmup_steps=0), _calm_then_nan(5), [error(step=5)]))
    assert "no_warmup" in early
    unknown_length = by_id(causes(config(warmup_steps=0), _calm_then_nan(43, steps=43), [error(step=43)]))
    assert "no_warmup" in unknown_length  # a log that ends at the break does not say how long the run was planned


# ---- the frozen-weights advice fits the objective and the run's own reward spread -----------------------------------


def test_a_frozen_dpo_run_is_not_told_about_grpo_advantages(tmp_path):
    """DehaoDai's minillm DPO (LoRA, grad_norm exactly 0 at all 20 points, the loss flat): the advice ended "in GRPO,
    that the advantages are not all 0", which has nothing to say to a DPO run."""
    rows = [{"step": s, "loss": 0.61 + 0.01 * ((s * 7) % 3 - 1), "grad_norm": 0.0, "learning_rate": 5e-6 * (1 - s / 101),
             "rewards/chosen": 0.18, "rewards/rejected": 0.006, "rewards/margins": 0.17 + 0.01 * (s % 3),
             "rewards/accuracies": 1.0, "logps/chosen": -42.0, "logps/rejected": -60.0, "epoch": s}
            for s in range(5, 101, 5)]
    found = by_id(forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False).causes)
    assert "frozen_weights" in found, list(found)
    assert "GRPO" not in found["frozen_weights"].suggestion


def test_a_frozen_grpo_run_whose_rewards_spread_is_not_told_to_check_for_zero_advantages(tmp_path):
    """justdtip's GRPO LoRA (grad_norm exactly 0 at all 200 points; reward_std 0.22-0.26, frac_reward_zero_std 0.125:
    the groups' rewards did differ): the advice said "in GRPO, check that the advantages are not all 0". The run's own
    numbers answer that: the advice says so instead of asking."""
    rows = [{"step": s, "loss": 0.015 + 0.005 * ((s * 7) % 3 - 1), "grad_norm": 0.0, "reward": 0.55 + 0.01 * ((s * 3) % 5 - 2),
             "reward_std": 0.24, "frac_reward_zero_std": 0.125, "rewards/reward_fn/mean": 0.55,
             "completions/mean_length": 120.0, "learning_rate": 1e-5, "epoch": s / 25} for s in range(1, 201)]
    found = by_id(forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False).causes)
    assert "frozen_weights" in found, list(found)
    frozen = found["frozen_weights"]
    assert "advantages are not all 0" not in frozen.suggestion, frozen.suggestion
    assert any("reward_std" in e or "frac_reward_zero_std" in e for e in frozen.evidence), frozen.evidence


# ---- a quantization setting is not the likely cause where the run's fp16 scaler tells an overflow -------------------


def test_double_quantization_is_not_the_likely_cause_of_an_fp16_overflow():
    """Hannibal0420's QLoRA (fp16 True, double quantization on, the decaying rate frozen from step 29 - the fp16 loss
    scaler skipping every update - and loss 0.0 hiding a NaN from step 32): the headline cause was "QLoRA double
    quantization with non-finite gradients (likely)", while the first incident itself says the fp16 scaler skipped
    every update. Double quantization on is the QLoRA default and nothing in the log points at it; in an fp16 run the
    overflow explains the same NaN: double quantization is at most possible there, after the overflow."""
    steps = range(1, 41)
    tl = timeline(loss={s: 2.0 if s < 32 else 0.0 for s in steps},
                  learning_rate={s: 2e-4 * (1 - min(s, 29) / 1000) for s in steps})
    masked = Finding("masked_nan_loss", "error", 32, "loss 0.0 while the decaying rate has not moved since step 29",
                     metric="loss", evidence={"grad_norm": None, "lr_frozen_since": 29})
    found = causes(config(quant__bnb_4bit_use_double_quant=True, fp16=True, method="qlora"), tl, [masked])
    dq = by_id(found)["qlora_double_quant"]
    assert dq.confidence == "possible", dq
    assert any("fp16" in e for e in dq.evidence), dq.evidence
    assert found[0].cause != "qlora_double_quant", [c.cause for c in found]
    bf16 = by_id(causes(config(quant__bnb_4bit_use_double_quant=True, bf16=True, method="qlora"), tl, [masked]))
    assert bf16["qlora_double_quant"].confidence == "likely"  # no other numerics on the table: the rule as before


def test_a_projector_stage_is_not_judged_by_full_fine_tuning_rates():
    """The same FPT-VVU stage 1: with the language model frozen and no adapter named, neither the full fine-tuning
    range (1e-5 to 2e-5) nor an adapter's judges the projector's rate (LLaVA trains it at 1e-3 to 2e-3)."""
    tl = _warmed_up_then_nan()
    assert "lr_too_high" in by_id(causes(config(), tl, [error(step=40)]))
    assert "lr_too_high" not in by_id(causes(config(freeze_backbone=True, tune_mm_mlp_adapter=True), tl,
                                             [error(step=40)]))


def test_the_planned_length_a_trainer_state_records_places_the_warm_up_window(tmp_path):
    """Miguel-Alessio's chess LoRA (trainer_state.json only: max_steps 12000, the rate at 2e-4 from step 5, a
    grad_norm burst at step 2650 the run recovered from): "No learning-rate warm-up (possible)". The state's own
    max_steps says the burst came at 22% of the run, after a calm stretch: long after any warm-up would have ended."""
    rows = [{"step": s, "loss": 1.0 - s / 4000, "grad_norm": 130.0 if s == 265 else 0.3 + 0.01 * (s % 3),
             "learning_rate": 2e-4, "epoch": s / 2400} for s in range(5, 1201, 5)]
    a = forensics.analyze(_trainer_state(tmp_path / "run", rows, max_steps=1200), check_checkpoints=False)
    assert any(f.kind == "grad_norm_spike" for f in a.findings), [f.kind for f in a.findings]
    assert "no_warmup" not in by_id(a.causes)
    early = [dict(r, grad_norm=130.0 if r["step"] == 25 else 0.3 + 0.01 * (r["step"] % 3)) for r in rows]
    b = forensics.analyze(_trainer_state(tmp_path / "early", early, max_steps=1200), check_checkpoints=False)
    assert "no_warmup" in by_id(b.causes), [f.kind for f in b.findings]
