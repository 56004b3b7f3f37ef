"""Metamorphic tests: a coarser logging interval (or another harmless change) keeps the verdict.

Harmless changes to a real log's shape must not change its verdict (metamorphic review, session 13).

Each test builds a log the way the real program writes it, in the shape a coarser logging interval (or another
harmless change) gives a real case's log, and checks the verdict the finer log gets; beside it, a run of the same
shape where the rule must not fire.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.analyzers.learning_evidence import detect_ended_near_the_guess
from forensics.analyzers.never_learned import detect_never_learned
from forensics.config import RunConfig, Thresholds
from forensics.profile import run_profile
from forensics.timeline import LogRecords, build_timeline


# --- an eval that is the training set, logged coarsely -------------------------------------------------------------
# A LoRA fitting ~104 examples 50 times, its eval_dataset the training split: logged every 30 steps of a 52-step
# epoch, the epoch before an evaluation holds one or two training points, whose per-batch noise (a batch of 2 or 4
# examples: +-15%) decides alone whether the eval sits at the training loss's level.


STEPS_AN_EPOCH, EPOCHS, COARSE_LOGGING, EVAL_EVERY = 52, 50, 30, 500


def _train_loss(step: int, rng) -> float:
    if step <= 40:
        return 8.0 - 0.19 * step
    return float((0.045 + 0.24 * np.exp(-step / 600)) * (1 + rng.normal(0, 0.15)))


LORA_ON_LLAMA = {"peft_type": "LORA", "r": 4, "lora_alpha": 32, "task_type": "CAUSAL_LM",
                 "base_model_name_or_path": "meta-llama/Llama-3.2-1B"}


def _coarse_history(eval_loss, seed) -> list[dict]:
    """Every batch draws its noise; every 30th is logged, and an eval every 500 steps."""
    rng, total, history = np.random.default_rng(seed), STEPS_AN_EPOCH * EPOCHS, []
    for step in range(1, total + 1):
        train, epoch = _train_loss(step, rng), round(step / STEPS_AN_EPOCH, 4)
        if step % COARSE_LOGGING == 0:
            history.append({"step": step, "epoch": epoch, "loss": round(train, 4), "grad_norm": 2.5,
                            "learning_rate": 5e-5 * (1 - step / total)})
        if step % EVAL_EVERY == 0:
            history.append({"step": step, "epoch": epoch, "eval_loss": eval_loss(step)})
    return history


def _coarse_run(tmp_path, eval_loss, seed):
    total = STEPS_AN_EPOCH * EPOCHS
    state = dict(global_step=total, max_steps=total, num_train_epochs=EPOCHS, logging_steps=COARSE_LOGGING,
                 eval_steps=EVAL_EVERY, log_history=_coarse_history(eval_loss, seed))
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "adapter_config.json").write_text(json.dumps(LORA_ON_LLAMA))
    return tmp_path


def _the_training_level(step: int) -> float:
    return 0.045 + 0.24 * np.exp(-step / 600)  # the training set scored again: the training loss's own level


def _held_out(step: int) -> float:
    return 0.62 + 0.5 * np.exp(-step / 400)  # above the training loss, levelling off


def test_an_eval_at_the_training_level_logged_every_30_steps_still_does_not_stand_memorization_down(tmp_path):
    a = forensics.analyze(_coarse_run(tmp_path, _the_training_level, seed=1))
    assert a.status == "warning" and a.first_incident.kind == "memorization"
    assert a.first_incident.evidence["eval_like_training"] == "eval_loss"


def test_a_held_out_eval_logged_every_30_steps_keeps_the_run_healthy(tmp_path):
    a = forensics.analyze(_coarse_run(tmp_path, _held_out, seed=5))
    assert not any(f.kind == "memorization" for f in a.findings)
    assert a.status == "healthy"


# --- a DPO run at ln 2 with its reward margins at 0, logged every 30 steps ------------------------------------------
# A DPO LoRA at LR 5e-7 over 188 steps whose loss never leaves ln 2 and whose margins stay within 0.005 of 0, pair
# accuracy a coin flip, gradients flowing: logged every 10 steps (18 points) it never learned; logged every 30 steps
# (6 points) it is the same run and says the same.

def _dpo_every_30_steps(margin_scale: float) -> dict:
    steps = list(range(30, 190, 30))
    wobble = [-0.0016, 0.0017, -0.0001, 0.0003, -0.0005, 0.0008]
    signs = [1, -1, 0.5, -0.5, 1, -1]

    def series(values):
        return pd.Series(values, index=steps, dtype="float64")
    return {"loss": series([math.log(2) + w for w in wobble]),
            "rewards/margins": series([margin_scale * s for s in signs]),
            "rewards/accuracies": series([0.48, 0.52, 0.5, 0.49, 0.51, 0.5]), "grad_norm": series([2.0] * 6)}


def test_a_dpo_loss_at_ln2_with_margins_at_zero_logged_every_30_steps_never_learned():
    (found,) = detect_never_learned(_dpo_every_30_steps(0.004), Thresholds())
    assert (found.kind, found.severity, found.step) == ("never_learned", "error", 30)
    assert "reward margin" in found.message


def test_a_dpo_loss_near_ln2_whose_margins_move_logged_every_30_steps_is_not_never_learned():
    assert detect_never_learned(_dpo_every_30_steps(0.05), Thresholds()) == []


# --- a log kept every 20 epochs of a tiny set: the descent's last point, then the memorized level -------------------
# One step an epoch, 100 epochs, logged every 20: 0.1676 at epoch 20, then 0.014-0.021 to the end, no eval. Logged
# every 10 the log shows the tenfold descent (0.77 -> 0.03 by epoch 30) and is memorization; every 20 it shows only
# the descent's last point, short of tenfold, and the state it ends in is the same.
def _late_log(tmp_path, settled_level: float):
    losses = [0.1676] + [settled_level * f for f in (1.07, 0.9, 0.75, 0.7)]
    history = [{"step": 20 * (i + 1), "epoch": 20.0 * (i + 1), "loss": loss, "grad_norm": 0.05,
                "learning_rate": 2e-4 * (1 - 0.2 * i)} for i, loss in enumerate(losses)]
    state = dict(global_step=100, max_steps=100, num_train_epochs=100, logging_steps=20, log_history=history)
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "adapter_config.json").write_text(json.dumps(LORA_ON_LLAMA))
    return tmp_path


def test_a_log_kept_every_20_epochs_from_the_descents_last_point_is_memorization(tmp_path):
    a = forensics.analyze(_late_log(tmp_path, 0.02))
    assert a.status == "warning" and (a.first_incident.kind, a.first_incident.step) == ("memorization", 40)
    assert "0.1676, the last of a descent" in a.first_incident.message


def test_a_late_log_settling_at_a_few_hundredths_is_not_memorization(tmp_path):
    a = forensics.analyze(_late_log(tmp_path, 0.06))  # a forecast's or a regression's loss, not a memorized level
    assert not any(f.kind == "memorization" for f in a.findings)
    assert a.status == "healthy"


# --- a console printed unbuffered: the bar reads each dict's own step just before it ---------------------------------
# (A rule that dated every dict by its epoch where each followed a bar a whole epoch past it was taken back: the
# banner's steps per epoch it needs are wrong for a GRPO run, whose batch counts completions, and where max_steps
# cuts an epoch short, and it put correctly dated dicts on the wrong steps.)
def _unbuffered_console(tmp_path):
    """The same run printed unbuffered: the bar reads each dict's own step just before it."""
    lines = []
    for step in range(20, 169, 20):
        lines.append(f" {100 * step // 168}%|####      | {step}/168 [01:00<02:00,  8.81s/it]")
        lines.append(str({"loss": round(0.55 - 0.0002 * step, 4), "grad_norm": 0.06,
                          "learning_rate": 5e-5 * (1 - step / 168), "epoch": round(step / 56, 2)}))
    lines.append(str({"train_runtime": 1785.9, "train_loss": 0.53, "epoch": 3.0}))
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_dicts_after_bars_at_their_own_steps_keep_the_bars_steps(tmp_path):
    loss = forensics.analyze(_unbuffered_console(tmp_path)).timeline.series("loss")
    assert list(loss.index) == list(range(20, 169, 20))


UNSLOTH_GRPO_BANNER = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
                       "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 1,000\n"
                       "O^O/ \\_/ \\    Batch size per device = 6 | Gradient accumulation steps = 1\n"
                       "\\        /    Data Parallel GPUs = 1 | Total batch size (6 x 1 x 1) = 6\n")


def test_a_grpo_consoles_dicts_after_their_bars_keep_the_bars_steps_whatever_the_banner_says(tmp_path):
    """A GRPO batch counts completions (six a prompt here): its dicts' epochs are steps over 7,473, not over the
    banner's examples / batch, and its bars are right; a NaN at step 600 is at 600."""
    lines = [UNSLOTH_GRPO_BANNER]
    for step in range(1, 1001):
        lines.append(f"{step // 10}%|#         | {step}/1000 [00:{step % 60:02d}<10:00, 1.0s/it]")
        if step % 100 == 0:
            loss = "nan" if step == 600 else f"{0.01 + step / 1e5:.4f}"
            lines.append(f"{{'loss': {loss}, 'grad_norm': 0.3, 'learning_rate': 5e-06, 'reward': {0.2 + step / 2e3:.3f}, "
                         f"'reward_std': 0.2, 'kl': 0.001, 'epoch': {step / 7473:.4f}}}")
    (tmp_path / "grpo_console.log").write_text("\n".join(lines) + "\n")
    a = forensics.analyze(tmp_path)
    assert list(a.timeline.series("loss").index) == list(range(100, 1001, 100))
    assert a.first_incident.step == 600


# --- a TRL arguments class says the objective before a metric name only some TRL trainers log ---------------------
# alessandronoiato's GRPO run (GRPOConfig in training_args.bin, a loss near 0 and no reward) with num_tokens and
# mean_token_accuracy added to each record was called sft from the metric name, and its negative GRPO loss an
# impossible cross-entropy; the arguments class names the trainer itself.
def _profile_of(cls: str, metrics: tuple[str, ...]):
    steps = list(range(10, 210, 10))
    frame = pd.DataFrame({"step": steps * len(metrics), "metric": [m for m in metrics for _ in steps],
                          "value": [0.5] * (len(steps) * len(metrics)), "wall_time": float("nan")})
    timeline = build_timeline([LogRecords(source="trainer_state.json", format="trainer_state", frame=frame)])
    config = RunConfig()
    config.add("training_args_class", cls, "training_args.bin")
    return run_profile(None, config, timeline, [])


def test_a_grpo_config_with_a_token_accuracy_logged_is_rl():
    p = _profile_of("trl.trainer.grpo_config.GRPOConfig", ("loss", "num_tokens", "mean_token_accuracy"))
    assert (p.objective, p.algorithm) == ("rl", "grpo") and p.evidence["objective"].startswith("GRPOConfig")


def test_a_token_accuracy_with_no_trl_arguments_class_is_still_sft():
    p = _profile_of("transformers.training_args.TrainingArguments", ("loss", "num_tokens", "mean_token_accuracy"))
    assert p.objective == "sft" and "mean_token_accuracy" in p.evidence["objective"]


# --- stdout redirected into the output_dir: the dicts without their bars, the Trainer's arguments beside them -------
# `python train.py > out/train.log` keeps the printed dicts (tqdm's bars go to stderr) in the folder where the Trainer
# saves training_args.bin. arizalatansa's log written so (60 dicts, logging_steps 100, stopped at step 6000 of 6058
# before the closing summary) was dated 1, 2, ... 60 and its warning (a loss ended at 91% of ln 32000 after 6000
# updates) lost: the run too short to judge by its dated steps.
def _training_args_bin(folder, **kw):
    """training_args.bin as the Trainer saves it: torch.save of its TrainingArguments."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.save(transformers.TrainingArguments(output_dir=str(folder), report_to=[], **kw), folder / "training_args.bin")


def _stdout_capture(tmp_path, **arguments):
    """A run stopped before its closing summary (whose runtime x steps a second would give the steps)."""
    lines = [str({"loss": round(2.0 * 0.97 ** i, 4), "grad_norm": 1.5, "learning_rate": 5e-5 * (1 - i / 30),
                  "epoch": round((i + 1) / 30, 2)}) for i in range(30)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    _training_args_bin(tmp_path, **arguments)
    return tmp_path


def test_printed_dicts_beside_training_args_bin_are_dated_by_its_logging_steps(tmp_path):
    loss = forensics.analyze(_stdout_capture(tmp_path, logging_steps=100)).timeline.series("loss")
    assert list(loss.index) == list(range(100, 3001, 100))


def test_logging_steps_of_an_epoch_strategy_do_not_date_the_dicts(tmp_path):
    # (under logging_strategy 'epoch' the Trainer ignores logging_steps, which keeps its default 500)
    loss = forensics.analyze(_stdout_capture(tmp_path, logging_strategy="epoch")).timeline.series("loss")
    assert list(loss.index) != list(range(500, 15001, 500))


# --- a run near the uniform guess whose log stops before its planned end ------------------------------------------
# arizalatansa's 4-wide BERT2BERT: 10.37 (ln 32000) -> 9.43 over its 6058 planned steps, flattening; its log cut at
# 85% (5100 steps, 9.45 and falling 0.1 nat a thousand steps) was healthy, as if it might still get anywhere.
def _near_the_guess(last_step: int, end_level: float, every: int = 100) -> dict:
    steps = list(range(every, last_step + 1, every))
    level = math.log(32000)
    values = [end_level + (level - end_level) * math.exp(-s / 1500) + 0.004 * (-1) ** i for i, s in enumerate(steps)]
    return {"loss": pd.Series(values, index=steps, dtype="float64"),
            "epoch": pd.Series([s / 6058 for s in steps], index=steps, dtype="float64")}


def test_a_log_stopped_at_85_percent_falling_too_slowly_to_leave_the_guess_is_no_learning_evidence():
    (found,) = detect_ended_near_the_guess(_near_the_guess(5100, 9.4), Thresholds(), 32000, 1, 6058)
    assert (found.kind, found.step) == ("no_learning_evidence", 100)
    assert "84% of its planned 6058 steps" in found.message


def test_a_log_stopped_at_85_percent_still_falling_fast_is_not_judged():
    # near the guess until step 3800, then 0.8 nat a thousand steps down to 9.22 at 5100: at that rate it gets under
    # 0.85 ln V = 8.82 before its planned end
    metrics = _near_the_guess(5100, 9.4)
    steps = metrics["loss"].index
    metrics["loss"] = pd.Series([10.37 - 0.00003 * s - 0.0008 * max(0, s - 3800) for s in steps], index=steps)
    assert 8.82 < float(metrics["loss"].iloc[-1]) < 9.3
    assert detect_ended_near_the_guess(metrics, Thresholds(), 32000, 1, 6058) == []


def test_a_log_stopped_before_half_its_planned_steps_is_not_judged():
    assert detect_ended_near_the_guess(_near_the_guess(2500, 9.4), Thresholds(), 32000, 1, 6058) == []
