"""Tests of the causes' advice (causes/): what a cause says fits the run's own data and profile.

Adversarial review of the causes' advice on the real corpus (warning and broken cases): what a cause says must fit
the run's own data and profile. Each test stands for a real run named in its docstring, says what the tool said and
what is right, and builds the smallest input that shows it."""
from __future__ import annotations

import json
import math

import forensics
from forensics.analyzers import run_all
from forensics.causes import infer_causes
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile
from tests.test_causes import by_id, causes, config, error, timeline


NAN = math.nan


def _trainer_state(folder, rows):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": rows[-1]["step"]}))
    return folder


def _all_evidence(found):
    return [e for c in found for e in c.evidence]


# ---- the learning rate judged is the one in force before the trouble -------------------------------------------------


def test_a_nan_gradient_at_the_first_step_is_not_put_down_to_the_learning_rate(tmp_path):
    """OpenBMB MiniCPM-V issue 212 (grad_norm NaN from step 1, learning rate 0.0 at step 1, warming up to 2.07e-4 by
    step 13) and FPT-VVU's fp16 ViVidBot (NaN from step 1): the loss and gradient of the first step
    are computed on the weights as loaded, before any update, so no learning rate, warm-up or clipping made them. The
    tool said "Learning rate 0.0002071: too high if this was full fine-tuning" (FPT-VVU: "Learning rate 0.002 too high
    ... (likely)"). Right: no optimizer cause, and a cause that says it came before any update. (Time-MoE issue 31,
    once named here, is a paste from epoch 0.54: see test_causes_excerpt_from_mid_run.)"""
    rows = [{"loss": 1.08 if s == 1 else 0.0, "grad_norm": NAN, "learning_rate": 2e-4 * min(1.0, (s - 1) / 12),
             "epoch": s / 20, "step": s} for s in range(1, 21)]
    a = forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False)
    found = by_id(a.causes)
    assert not {"lr_too_high", "no_warmup", "no_clipping"} & set(found), list(found)
    assert "before any update" in found["sudden_break"].title
    assert "Resume from a checkpoint" not in found["masked_nan_loss"].suggestion


def test_a_rate_the_schedule_reached_only_after_the_break_is_not_its_cause():
    """lf-sft-graduate-agent (LLaMA-Factory: loss NaN from step 20 with the rate at 5e-5, the warm-up reaching 1e-4
    at step 40) and FPT-VVU's stage-1 ViVidBot (configured 0.002, the warm-up at 5.4e-5 when grad_norm spiked at step
    782, the whole log never above 1.45e-4): the tool quoted the later peak (and the configured 0.002, "100x the top
    of the range"). Right: the rate judged is the highest in force up to the trouble."""
    ramp = {10: 1e-5, 20: 2e-5, 30: 5e-5, 40: 1e-4, 50: 1e-4}
    tl = timeline(learning_rate=ramp, grad_norm={10: 1.0, 20: NAN, 30: NAN, 40: NAN, 50: NAN})
    assert "lr_too_high" not in by_id(causes(config(method="full"), tl, [error(step=20)]))
    configured = by_id(causes(config(method="full", learning_rate=2e-3), tl, [error(step=20)]))
    assert "lr_too_high" not in configured


def test_a_configured_peak_the_log_reached_still_judges_the_run():
    """The other side of the rule above: a rate logged at its configured peak before the break is judged as before."""
    tl = timeline(learning_rate={10: 3e-4, 20: 3e-4}, grad_norm={10: 1.0, 20: NAN})
    lr = by_id(causes(config(method="full", learning_rate=3e-4), tl, [error(step=20)]))["lr_too_high"]
    assert "0.0003" in lr.title


# ---- precision advice fits the run's precision ----------------------------------------------------------------------


def _sudden_nan():
    steps = range(1, 60)
    return timeline(learning_rate={s: 5e-7 for s in steps}, loss={s: 2.0 if s < 43 else 0.0 for s in steps},
                    grad_norm={s: 0.096 if s < 43 else NAN for s in steps})


def test_a_sudden_break_in_an_fp32_run_is_not_told_to_use_bf16():
    """aleudework/fine-tune-models-exp (a LoRA run in fp32: grad_norm flat at 0.096 for 42 steps, NaN from step 43):
    the tool said "look ... at precision (an fp16 overflow: use bf16)". An fp32 run cannot overflow at fp16's limit;
    the advice names the precision it ran in."""
    tl = _sudden_nan()
    fp32 = RunProfile(method="lora", objective="sft", precision="fp32")
    cause = by_id(infer_causes(config(), tl, run_all(tl, Thresholds()), [], Thresholds(), fp32))["sudden_break"]
    assert "use bf16" not in cause.suggestion and "fp32" in cause.suggestion
    fp16 = RunProfile(method="lora", objective="sft", precision="fp16")
    assert "use bf16" in by_id(infer_causes(config(), tl, run_all(tl, Thresholds()), [], Thresholds(),
                                            fp16))["sudden_break"].suggestion


# ---- a cause quotes only what the run logged ------------------------------------------------------------------------


def test_a_masked_nan_told_by_a_frozen_rate_does_not_quote_a_nan_grad_norm():
    """Hannibal0420's QLoRA (TensorBoard: no grad_norm logged; loss 0.0 from step 32 while the decaying rate froze at
    step 29): the tool said "loss is logged as exactly 0.0 where grad_norm is NaN/Inf" and, for double quantization,
    "grad_norm non-finite from step 32". No grad_norm was logged: the evidence says what told the NaN instead."""
    steps = range(1, 41)
    tl = timeline(loss={s: 2.0 if s < 32 else 0.0 for s in steps},
                  learning_rate={s: 2e-4 * (1 - min(s, 29) / 1000) for s in steps})
    masked = Finding("masked_nan_loss", "error", 32, "loss 0.0 while the decaying rate has not moved since step 29",
                     metric="loss")
    found = causes(config(quant__bnb_4bit_use_double_quant=True, fp16=True), tl, [masked])
    lines = _all_evidence(found)
    assert {"masked_nan_loss", "qlora_double_quant"} <= set(by_id(found))
    assert not any("grad_norm is NaN" in e or "grad_norm non-finite" in e for e in lines), lines
    assert any("grad_norm was not logged" in e for e in by_id(found)["masked_nan_loss"].evidence)


def test_zeros_the_tool_reads_as_a_hidden_nan_are_not_sent_to_the_labels():
    """FPT-VVU's fp16 ViVidBot (loss, grad_norm and rate 0.0 at all 17 steps, then DeepSpeed's 'loss scale already
    at minimum'): the tool read them as a hidden NaN (masked_nan_loss) and also said "No learning signal: loss and
    grad_norm 0.0 (likely): check labels and masks", and that the loss sat "where grad_norm is NaN/Inf" though
    grad_norm was 0.0. Right: one reading, the NaN, with grad_norm quoted as logged."""
    steps = range(1, 18)
    zeros = {s: 0.0 for s in steps}
    tl = timeline(loss=zeros, grad_norm=zeros, learning_rate=zeros, loss_scale_at_minimum={17: 1.0})
    masked = Finding("masked_nan_loss", "error", 1, "every step overflowed", metric="loss")
    found = by_id(causes(config(fp16=True), tl, [masked]))
    assert "zero_loss_zero_grad" not in found
    assert "grad_norm is NaN" not in found["masked_nan_loss"].evidence[0]


def test_a_nan_from_the_first_step_is_not_told_to_resume_from_before_it():
    """Time-MoE issue 31 / SY-Xuan Pink issue 6 (loss 0.0 and grad_norm NaN from step 1): the tool said "the run
    diverged there. Resume from a checkpoint before it". Nothing came before step 1; the run never diverged."""
    tl = timeline(loss={s: 0.0 for s in range(1, 11)}, grad_norm={s: NAN for s in range(1, 11)},
                  learning_rate={s: 5e-5 for s in range(1, 11)})
    masked = by_id(causes(config(), tl, [error(step=1)]))["masked_nan_loss"]
    assert "Resume from a checkpoint" not in masked.suggestion and "diverged" not in masked.suggestion
    later = by_id(causes(config(), timeline(loss={1: 2.0, 2: 0.0}, grad_norm={1: 1.0, 2: NAN}), [error(step=2)]))
    assert "resume from a checkpoint saved before it" in later["masked_nan_loss"].suggestion


# ---- no warm-up claim from a log that does not show the start -------------------------------------------------------


def test_a_log_that_starts_after_a_resume_shows_no_missing_warm_up():
    """llama3-8b-unsloth-mobility-stdout (a console captured after a resume at step 1501: rate 1.38e-3 at step 1503,
    logged every 2 steps, on a cosine to 0 at 4000): the tool said "learning_rate was already 0.001383 at the first
    logged step 1503: no warm-up". A warm-up in the first 1,500 steps would not show in this log."""
    steps = range(1503, 1800, 2)
    tl = timeline(learning_rate={s: 2e-3 * (1 + math.cos(math.pi * s / 4000)) / 2 for s in steps},
                  loss={s: 1.4 if s < 1633 else 4.0 for s in steps}, grad_norm={s: 1.0 for s in steps})
    div = Finding("divergence", "error", 1633, "the loss diverges", metric="loss")
    assert "no_warmup" not in by_id(causes(config(method="lora"), tl, [div]))


def test_a_few_skipped_fp16_steps_the_run_went_on_from_are_not_told_to_change_precision():
    """adhikarinarayan's QLoRA (fp16, one NaN grad_norm at step 2058 with a finite loss, the run going on), and five
    more runs of one or two skips: the tool told them "Train in bf16 ..., a lower learning rate and max_grad_norm=1.0".
    An fp16 scaler skipping an overflowing update is the scaler at work (VERDICTS.md). Right: the cause may stand,
    its advice says there is nothing to change for that alone; a run the skips did break keeps the bf16 advice."""
    tl = timeline(loss={s: 2.0 - s / 100 for s in range(1, 61)},
                  grad_norm={s: NAN if s == 30 else 1.0 for s in range(1, 61)})
    skipped = Finding(kind="skipped_steps", severity="warning", step=30, message="skipped", metric="grad_norm")
    fp16 = by_id(causes(config(fp16=True), tl, [skipped]))["fp16_overflow"]
    assert "Nothing to change" in fp16.suggestion and "lower learning rate" not in fp16.suggestion
    broke = by_id(causes(config(fp16=True), NAN_GRAD_AFTER, [skipped, error(step=40)]))["fp16_overflow"]
    assert "Train in bf16" in broke.suggestion


NAN_GRAD_AFTER = timeline(loss={s: 2.0 if s < 40 else 0.0 for s in range(1, 61)},
                          grad_norm={s: NAN if s == 30 or s >= 40 else 1.0 for s in range(1, 61)})



def test_a_grpo_run_whose_gradient_went_to_zero_is_not_sent_to_its_labels(tmp_path):
    """JuncyLu's collapsed GRPO (tests/realworld): grad_norm exactly 0 at 42 of 48 points from step 20, the loss 0.0
    as GRPO's is by construction, the reward flat. The cause said "No learning signal: loss and grad_norm 0.0 (likely):
    check labels and masks: every label -100", advice for an SFT run. Right: the GRPO cause, rewards without spread."""
    grad = [47.75, 0, 404, 0, 0, 122.5, 218, 0, 77, 0, 0, 63] + [0] * 13 + [112] + [0] * 23
    rows = [{"step": 10 * (i + 1), "loss": 0.0, "grad_norm": g, "reward": 2.4 + 0.3 * ((i * 7) % 5 - 2) / 2,
             "frac_reward_zero_std": 0.9, "completions/mean_length": 4.5, "learning_rate": 1e-5, "epoch": i / 100}
            for i, g in enumerate(grad)]
    found = by_id(forensics.analyze(_trainer_state(tmp_path / "run", rows), check_checkpoints=False).causes)
    assert "no_reward_spread" in found and "zero_loss_zero_grad" not in found, list(found)
