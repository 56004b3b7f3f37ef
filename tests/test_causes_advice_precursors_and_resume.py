"""Tests of the causes' advice (causes/): fp16, precursors, ranges, the hider, resume points.

Review of the causes' advice, day 11 (group A): the fp16 cause read from the run profile, "likely" only on a
precursor in the run's own metrics, ranges that say what they are for, the hider ranked after what it hid, and resume
advice only where there is a checkpoint to resume from. Each test builds the smallest run that shows it, the way the
analysis builds one (the analyzers' findings, the run profile, then the causes), and a run of the same shape where the
rule must stay silent."""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics
from forensics.analysis import Analysis
from forensics.analyzers import run_all
from forensics.checkpoints.types import CheckpointInfo, CheckpointRef
from forensics.causes import infer_causes
from forensics.config import RunConfig, Thresholds
from forensics.findings import Cause, Finding
from forensics.profile import RunProfile, run_profile
from forensics.report.story import build_story
from forensics.report.text import analysis_text
from forensics.timeline import Timeline
from tests.test_causes import by_id, config, error, timeline


NAN = math.nan
STEPS = range(1, 41)


def judged(tl, cfg=None, checkpoints=(), profile=None):
    """The causes as `analyze` infers them: the analyzers' findings, the run profile read from them, the rules."""
    cfg = cfg or RunConfig()
    findings = run_all(tl, Thresholds())
    profile = profile or run_profile(None, cfg, tl, findings)
    return infer_causes(cfg, tl, findings, list(checkpoints), Thresholds(), profile), profile


# ---- 1. an fp16 run told by its loss scaler gets the fp16 cause, not the learning rate alone --------------------------

def _scaler_falls_to_the_floor():
    """BERT pre-training at lr 6e-3 (NVIDIA's LAMB recipe): the loss falls, then the fp16 loss scale halves on every
    overflow from step 30 down to 1e-12 and the loss goes NaN; no config file says fp16."""
    scale = {s: 65536.0 if s < 30 else 65536.0 / 2 ** (8 * (s - 29)) for s in STEPS}
    return timeline(learning_rate={s: 6e-3 for s in STEPS}, loss_scale=scale,
                    loss={s: 9.0 - s / 10 if s < 30 else NAN for s in STEPS})


def test_fp16_told_by_the_loss_scaler_alone_is_named_as_the_overflow():
    found, profile = judged(_scaler_falls_to_the_floor())
    assert profile.precision == "fp16"
    assert found[0].cause == "fp16_overflow" and found[0].confidence == "likely", [c.cause for c in found]
    assert "loss scale" in found[0].evidence[0]
    assert by_id(found)["lr_too_high"].confidence == "possible"


def test_an_fp16_run_that_learned_with_its_scale_steady_gives_no_fp16_cause():
    """The loss scale logged at 32768 throughout while the loss falls: fp16, and nothing overflowed."""
    scale = {s: 32768.0 for s in STEPS}
    tl = timeline(learning_rate={s: 2e-5 for s in STEPS}, loss_scale=scale, loss={s: 3.0 - s / 20 for s in STEPS},
                  grad_norm={s: 1.0 for s in STEPS})
    found, profile = judged(tl)
    assert profile.precision == "fp16" and "fp16_overflow" not in by_id(found)


# ---- "likely" only where the run's own metrics show a precursor --------------------------------------------------------

def _nan_at(step, grad):
    return timeline(learning_rate={s: 3e-3 for s in STEPS}, loss={s: 2.0 if s < step else NAN for s in STEPS},
                    grad_norm={s: grad(s) if s < step else NAN for s in STEPS})


def test_a_rate_far_out_of_range_without_a_precursor_is_only_possible():
    """A full fine-tune at 3e-3 (150x the 7B row's top) whose grad_norm sat at 1.0 until it went NaN: a sudden break.
    The rate is out of every recipe, but nothing in the log points at it: possible, not likely."""
    lr = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds()))
    assert lr["lr_too_high"].confidence == "possible"


def test_the_same_rate_with_grad_norm_climbing_before_the_break_is_likely():
    lr = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0 if s < 26 else 4.0 ** (s - 25)),
                            [error(step=30)], [], Thresholds()))
    assert lr["lr_too_high"].confidence == "likely"
    assert any("grad_norm climbed" in e for e in lr["lr_too_high"].evidence)


# ---- a range says what it is for ----------------------------------------------------------------------------------------

def test_a_range_judged_for_an_unknown_objective_and_size_says_so():
    found = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds(),
                               profile=RunProfile(method="full")))
    lr = found["lr_too_high"]
    assert "supervised fine-tuning recipes for a 7B-class model" in lr.suggestion, lr.suggestion
    assert any("objective not known" in e and "pre-training" in e for e in lr.evidence), lr.evidence


def test_a_range_for_a_known_objective_and_size_says_nothing_more():
    found = by_id(infer_causes(config(method="full"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds(),
                               profile=RunProfile(method="full", objective="sft", model_params=7_000_000_000)))
    lr = found["lr_too_high"]
    assert "not known" not in lr.suggestion and not any("not known" in e for e in lr.evidence)


# ---- 2. no advice for a cause the tool itself rules out -----------------------------------------------------------------

def _grpo_findings(spread_dead: bool):
    """A GRPO LoRA run at 1.6e-4 with a grad_norm spike it recovered from; its groups without reward spread at 56 of 69
    logged steps (the no_learning_signal the dead-reward detector writes), or scoring apart."""
    spike = Finding("grad_norm_spike", "warning", 85, "grad_norm spikes at step 85", metric="grad_norm")
    dead = Finding("no_learning_signal", "error", 5, "no reward spread", metric="frac_reward_zero_std",
                   evidence={"dead_steps": 56, "logged_steps": 69})
    return [dead, spike] if spread_dead else [spike]


def _grpo_log():
    return timeline(learning_rate={s: 1.6e-4 for s in range(5, 350, 5)},
                    grad_norm={s: 7.1 if s == 85 else 0.3 for s in range(5, 350, 5)})


def test_groups_without_reward_spread_rule_out_the_learning_rate_and_warm_up():
    """Radar-Lei_SCU_TSC, JuncyLu_trl_DAPO: "a learning-rate change cannot help while every advantage is 0" (likely),
    and beside it "Learning rate too high (possible)" and "No warm-up (possible)" off a spike that recovered."""
    profile = RunProfile(method="lora", objective="rl", model_params=500_000_000)
    found = infer_causes(config(warmup_steps=0), _grpo_log(), _grpo_findings(True), [], Thresholds(), profile)
    assert [c.cause for c in found] == ["no_reward_spread"], [c.cause for c in found]


def test_a_grpo_run_whose_groups_scored_apart_still_hears_about_its_rate():
    profile = RunProfile(method="lora", objective="rl", model_params=500_000_000)
    found = by_id(infer_causes(config(warmup_steps=0), _grpo_log(), _grpo_findings(False), [], Thresholds(), profile))
    assert "lr_too_high" in found and "no_reward_spread" not in found


def _dpo_log(nan_in: str):
    """A DPO run at 1e-6 from step 100 (no warm-up) whose `nan_in` metric is NaN at 3 of 40 points, finite between,
    the last of them the log's last point (FugueZ's logits/chosen: steps 200, 2500 and 6200 of 62 points)."""
    steps = range(100, 4100, 100)
    bad = {200, 2500, 4000}
    loss = {s: 0.69 - s / 20000 for s in steps}
    chosen = {s: -1.9 for s in steps}
    (loss if nan_in == "loss" else chosen).update({s: NAN for s in bad})
    return timeline(learning_rate={s: 1e-6 for s in steps}, loss=loss, **{"logits/chosen": chosen},
                    **{"rewards/margins": {s: s / 4000 for s in steps}})


def test_a_batch_with_nothing_to_average_is_no_optimizer_trouble():
    """FugueZ_Qwen2.5-0.5B-SFT-DPO: logits/chosen NaN at 3 points, finite between, the loss finite (the finding puts
    it down to an empty batch), yet "No learning-rate warm-up (possible)" was the cause named."""
    found, _ = judged(_dpo_log("logits/chosen"), config(warmup_steps=0))
    assert "no_warmup" not in by_id(found) and "lr_too_high" not in by_id(found), [c.cause for c in found]


def test_the_same_nan_in_the_training_loss_still_hears_about_the_warm_up():
    found, _ = judged(_dpo_log("loss"), config(warmup_steps=0))
    assert "no_warmup" in by_id(found), [c.cause for c in found]


# ---- 3. what hid the NaN comes after what caused it; the next step acts on a cause with a fix -------------------------

def _trainer_state(folder, nan_from: int | None, checkpoints=()):
    """An HF trainer_state.json: loss falling from 2.0, grad_norm calm at about 0.1, then (from `nan_from`) the NaN
    filter's loss 0.0 beside a NaN grad_norm; lr 2e-5 constant, logging every step."""
    rows = []
    for step in range(1, 61):
        nan = nan_from is not None and step >= nan_from
        rows.append({"step": step, "epoch": step / 60, "learning_rate": 2e-5, "loss": 0.0 if nan else 2.0 - step / 60,
                     "grad_norm": float("nan") if nan else 0.1 + 0.001 * (step % 3)})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": 60, "max_steps": 60}))
    return folder


def test_the_nan_filter_is_shown_after_the_sudden_break_it_hid(tmp_path):
    """aleudework_fine-tune-models-exp, tloen_alpaca-lora_issue418: grad_norm calm at ~0.1, then NaN at step 43 and the
    loss logged 0.0. The masked-NaN cause (likely) came first, its only advice "Resume from a checkpoint saved before
    it" (no fix: the same batch hits it again), the sudden break under "Also"."""
    a = forensics.analyze(_trainer_state(tmp_path / "run", 43))
    # the list is by confidence (issue 4); the report leads by role: the break first, the filter as what hid it
    roles = {c["cause"]: c["role"] for c in a.to_dict()["causes"]}
    assert roles["sudden_break"] == "leading" and roles["masked_nan_loss"] == "hid_the_cause", roles
    story = build_story(a)
    assert story.next_step.startswith("Next: Look at the batches just before step 43"), story.next_step
    text = " ".join(analysis_text(a).split())
    assert "Hidden by" in text and "fix what made it NaN first" in text, text
    assert "Resume from a checkpoint saved before it" not in text


def test_a_run_that_learned_has_no_cause_and_nothing_to_do(tmp_path):
    a = forensics.analyze(_trainer_state(tmp_path / "run", None))
    assert a.causes == [] and build_story(a).next_step == "Nothing to do."


def test_a_note_on_how_the_loss_was_logged_is_not_the_next_step():
    """AMindToThink_interpretable-fine-tuning (never learned): the only "What to do" was "Divide the logged training
    loss by 8", a note on reading the log, not a change to the run."""
    first = Finding("never_learned", "error", 1, "the model never learned", metric="eval_loss")
    note = Cause("accumulation_scaled_loss", "likely", ["the training loss is 7.8x the eval loss"],
                 "Divide the logged training loss by 8 before reading it.", "The training loss was logged summed")
    a = Analysis(path=".", status="broken", findings=[first], first_incident=first, timeline=Timeline.empty(),
                 causes=[note])
    assert "Divide" not in build_story(a).next_step and "around 1" in build_story(a).next_step
    assert "Reading it" in analysis_text(a) and "What to do" not in analysis_text(a)


def test_a_note_on_the_log_is_the_answer_where_the_incident_is_the_loss_scale():
    first = Finding("train_eval_mismatch", "warning", 25, "train loss 8x the eval loss", metric="loss")
    note = Cause("accumulation_scaled_loss", "likely", ["the training loss is 7.8x the eval loss"],
                 "Divide the logged training loss by 8 before reading it.", "The training loss was logged summed")
    a = Analysis(path=".", status="warning", findings=[first], first_incident=first, timeline=Timeline.empty(),
                 causes=[note])
    assert "Divide" in build_story(a).next_step


# ---- 4. resume only from a checkpoint saved before the trouble, named -----------------------------------------------------

def _ckpt(step):
    return CheckpointInfo(ref=CheckpointRef(name=f"checkpoint-{step}", step=step, path=Path(f"/run/checkpoint-{step}"),
                                            files=()), status="ok")


def _collapse_at(step):
    """A full fine-tune at 3e-3 whose grad_norm climbed from step 26 and went NaN at `step`."""
    return _nan_at(step, lambda s: 1.0 if s < 26 else 4.0 ** (s - 25))


def test_the_lr_advice_offers_no_resume_when_nothing_was_saved_before_the_trouble():
    """sample_runs' early_collapse: "Last good: none saved before step 5", yet the advice ended "...and resume from
    the last good checkpoint"."""
    lr = by_id(infer_causes(config(method="full"), _collapse_at(30), [error(step=30)], [_ckpt(30), _ckpt(40)],
                            Thresholds()))["lr_too_high"]
    assert "resume" not in lr.suggestion, lr.suggestion


def test_the_lr_advice_names_the_checkpoint_saved_before_the_trouble():
    lr = by_id(infer_causes(config(method="full"), _collapse_at(30), [error(step=30)], [_ckpt(20), _ckpt(40)],
                            Thresholds()))["lr_too_high"]
    assert lr.suggestion.endswith("and resume from checkpoint-20 (step 20)."), lr.suggestion


def test_a_hidden_nan_the_run_got_past_is_not_told_to_resume():
    """Loss 0.0 beside a NaN grad_norm at two steps, then the run went on learning (a warning, not broken)."""
    tl = timeline(loss={s: 0.0 if s in (20, 21) else 2.0 - s / 60 for s in STEPS},
                  grad_norm={s: NAN if s in (20, 21) else 0.5 for s in STEPS})
    masked = by_id(infer_causes(RunConfig(), tl, [Finding("masked_nan_loss", "warning", 20, "masked", metric="loss")],
                                [_ckpt(10)], Thresholds()))["masked_nan_loss"]
    assert "nothing to resume" in masked.suggestion and "resume from" not in masked.suggestion, masked.suggestion


def test_an_adapter_of_unknown_objective_is_not_told_about_pre_training_rates():
    """JustinBStrong_qlora, llama3-8b-unsloth-mobility-stdout (LoRA/QLoRA, objective unknown): an adapter is never
    pre-trained from scratch; the range is the SFT one, and preference and RL recipes run lower."""
    lr = by_id(infer_causes(config(method="lora"), _nan_at(30, lambda s: 1.0), [error(step=30)], [], Thresholds(),
                            profile=RunProfile(method="lora", model_params=8_000_000_000)))["lr_too_high"]
    assert "pre-training" not in lr.suggestion and "preference and RL recipes run lower" in lr.suggestion, \
        lr.suggestion


def test_the_next_step_names_the_checkpoint_to_resume_from_once(tmp_path):
    """The learning-rate advice now names the checkpoint; the next step adds it only where the cause did not."""
    bad = CheckpointInfo(ref=CheckpointRef(name="checkpoint-40", step=40, path=Path("/run/checkpoint-40"), files=()),
                         status="nonfinite", nonfinite_tensors=["w"])
    first = Finding("nonfinite_metric", "error", 30, "grad_norm NaN from step 30", metric="grad_norm")
    told = Cause("lr_too_high", "likely", ["e"], "Lower the learning rate, and resume from checkpoint-20 (step 20).")
    untold = Cause("sudden_break", "possible", ["e"], "Look at the batches just before step 30.")
    for cause in (told, untold):
        a = Analysis(path=".", status="broken", findings=[first], first_incident=first, timeline=Timeline.empty(),
                     checkpoints=[_ckpt(20), bad], causes=[cause])
        assert build_story(a).next_step.count("resume from checkpoint-20") == 1, build_story(a).next_step
