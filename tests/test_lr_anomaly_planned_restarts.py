"""Tests of the lr_anomaly rule: a restart mid-decay that the configured scheduler plans.

A schedule back at its peak in the middle of its decay is planned where the configuration names a scheduler that
starts over (a multi-stage or multi-cycle one), and a resume that lost the scheduler's state where it names a
single decay.

The learning rate alone cannot tell them apart: a two-stage plan whose re-warm-up is shorter than the logging
interval, each stage decaying to 60% of the peak, logs the same rates as a run resumed at the stage boundary without
its scheduler.pt. Runs: LLaMA-Factory's trainer_log.jsonl beside its training_args.yaml, and the HF Trainer's
trainer_state.json beside the training_args.bin it pickles, as those programs write them.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import forensics


PEAK = 2e-4
STAGE = 2000  # steps a stage: a 50-step re-warm-up, then a linear decay to 60% of the peak
LOGGED = range(130, 4001, 100)  # every 100 steps: no point falls inside a re-warm-up


def _stage_rate(step: int) -> float:
    t = step % STAGE
    return PEAK * (t / 50 if t < 50 else 1 - 0.4 * (t - 50) / (STAGE - 50))


def _loss(step: int, rng) -> float:
    return round(2.5 * math.exp(-step / 1300) + 0.8 + 0.03 * float(rng.standard_normal()), 4)


def _llamafactory_run(folder, scheduler: str):
    rng = np.random.default_rng(0)
    lines = [{"current_steps": s, "total_steps": 4000, "loss": _loss(s, rng), "lr": _stage_rate(s),
              "epoch": round(2 * s / 4000, 2), "percentage": round(100 * s / 4000, 2), "elapsed_time": "0:10:00",
              "remaining_time": "0:10:00"} for s in LOGGED]
    (folder / "trainer_log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "training_args.yaml").write_text(
        f"bf16: true\nlearning_rate: {PEAK}\nlogging_steps: 100\nlr_scheduler_type: {scheduler}\nmax_steps: 4000\n"
        "output_dir: saves/stages\nper_device_train_batch_size: 4\nstage: sft\nfinetuning_type: full\n")
    return folder


def _hf_run(folder, scheduler: str, kwargs: dict):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    rng = np.random.default_rng(0)
    history = [{"epoch": round(2 * s / 4000, 4), "grad_norm": round(1 + 0.1 * float(rng.standard_normal()), 3),
                "learning_rate": _stage_rate(s), "loss": _loss(s, rng), "step": s} for s in LOGGED]
    state = {"global_step": 4000, "max_steps": 4000, "num_train_epochs": 2, "logging_steps": 100,
             "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    args = transformers.TrainingArguments(output_dir=str(folder), report_to=[], learning_rate=PEAK, max_steps=4000,
                                          logging_steps=100, lr_scheduler_type=scheduler, lr_scheduler_kwargs=kwargs)
    torch.save(args, folder / "training_args.bin")
    return folder


def _restart_warnings(folder) -> list:
    return [f for f in forensics.analyze(folder).findings if f.kind == "lr_anomaly"]


@pytest.mark.parametrize("scheduler", ["warmup_stable_decay", "cosine_with_restarts"])
def test_a_restart_mid_decay_is_planned_where_the_yaml_names_a_scheduler_that_starts_over(tmp_path, scheduler):
    assert _restart_warnings(_llamafactory_run(tmp_path, scheduler)) == []


@pytest.mark.parametrize("scheduler, kwargs", [("warmup_stable_decay", {"num_decay_steps": 1950}),
                                               ("cosine", {"num_cycles": 2})])
def test_a_restart_mid_decay_is_planned_where_training_args_name_stages_or_cycles(tmp_path, scheduler, kwargs):
    assert _restart_warnings(_hf_run(tmp_path, scheduler, kwargs)) == []


def test_a_restart_mid_decay_under_a_single_decay_scheduler_still_warns(tmp_path):
    found = _restart_warnings(_llamafactory_run(tmp_path, "linear"))
    assert [(f.step, f.evidence.get("started_over")) for f in found] == [(2130, True)]


def test_a_single_cosine_in_training_args_still_warns_at_the_restart(tmp_path):
    found = _restart_warnings(_hf_run(tmp_path, "cosine", {}))
    assert [(f.step, f.evidence.get("started_over")) for f in found] == [(2130, True)]


def test_a_restart_mid_decay_is_planned_where_the_deepspeed_config_names_a_cycling_scheduler(tmp_path):
    run = _llamafactory_run(tmp_path, "linear")  # DeepSpeed's own scheduler overrides the Trainer's
    (run / "ds_config.json").write_text(json.dumps({
        "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2},
        "scheduler": {"type": "OneCycle", "params": {"cycle_min_lr": 1.2e-4, "cycle_max_lr": PEAK,
                                                    "cycle_first_step_size": 50, "cycle_second_step_size": 1950}}}))
    assert _restart_warnings(run) == []


# A resume that restarts a warm-up schedule: HF's linear schedule, 100 warm-up steps over 2000, logged every 10 steps;
# resumed at step 800 from the weights alone, the scheduler starts at its step 0 again.
WARMUP, TOTAL, RESUMED_AT = 100, 2000, 800


def _warmup_linear(step: int) -> float:
    return PEAK * step / WARMUP if step < WARMUP else PEAK * (TOTAL - step) / (TOTAL - WARMUP)


def _trainer_state_run(folder, rates: dict[int, float]):
    rng = np.random.default_rng(1)
    history = [{"epoch": round(3 * s / TOTAL, 4), "grad_norm": round(1 + 0.1 * float(rng.standard_normal()), 3),
                "learning_rate": rate, "loss": _loss(s, rng), "step": s} for s, rate in rates.items()]
    (folder / "trainer_state.json").write_text(json.dumps(
        {"global_step": TOTAL, "max_steps": TOTAL, "num_train_epochs": 3, "logging_steps": 10, "log_history": history},
        indent=2))
    return folder


def test_a_resume_that_restarts_the_warm_up_mid_decay_warns_at_the_fall(tmp_path):
    rates = {s: _warmup_linear(s if s <= RESUMED_AT else s - RESUMED_AT) for s in range(10, TOTAL + 1, 10)}
    found = _restart_warnings(_trainer_state_run(tmp_path, rates))
    assert [(f.step, f.end_step, f.evidence.get("started_over")) for f in found] == [(810, 900, True)]


def test_a_warm_up_at_the_start_of_each_stage_at_even_intervals_is_a_plan(tmp_path):
    stage = 700  # three stages, each warming up over 50 steps and decaying to 60% of the peak
    rates = {s: PEAK * ((s % stage) / 50 if s % stage < 50 else 1 - 0.4 * (s % stage - 50) / (stage - 50))
             for s in range(10, TOTAL + 1, 10)}
    assert _restart_warnings(_trainer_state_run(tmp_path, rates)) == []


def test_one_warm_up_then_one_decay_is_silent(tmp_path):
    rates = {s: _warmup_linear(s) for s in range(10, TOTAL + 1, 10)}
    assert _restart_warnings(_trainer_state_run(tmp_path, rates)) == []
