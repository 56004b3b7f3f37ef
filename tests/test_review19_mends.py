"""Review rev19's findings on the day's readers and rules, each mended: printed sizes that are no count (',,,,', a
number past any model) read as none, not a traceback; a W&B summary or history counter that is NaN, infinite, huge or
an epoch repeated on every batch's row is no step counter, while a table row without it does not undo one; a verl
config print cut before its model section says nothing of the method; a flat held-out reward of a fixed test set is
no decline, several test sets are judged as one; a learning rate as far behind its schedule at its first logged point
as at its last is no skipped update (a warm-up the Trainer's arguments do not show)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule
from forensics.analyzers.reward_decline import detect_reward_decline
from forensics.config import Thresholds
from forensics.ingest.console_param_counts import parameter_count_said
from forensics.ingest.console_recipes import recipe_facts
from forensics.ingest.wandb import _own_counter
from forensics.ingest.wandb_files import _summary_frame

_TITAN = "[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - Model llama3 debugmodel size: {} total parameters\n"


@pytest.mark.parametrize("size", [",,,,", "99,999,999,999,999,999,999", "0"])
def test_a_printed_size_that_is_no_models_count_is_no_size(size):
    assert "console_n_params" not in parameter_count_said(_TITAN.format(size))


def test_a_printed_titan_size_is_still_read():
    assert parameter_count_said(_TITAN.format("8,566,272"))["console_n_params"] == 8566272


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e300, -5])
def test_a_summary_counter_that_is_no_step_falls_back_to_wandbs_own(bad):
    frame = _summary_frame({"iter": bad, "_step": 40, "loss": 1.5})
    assert set(frame["step"]) == {40}


def test_a_step_column_repeated_on_every_batchs_row_is_no_counter():
    rows = [{"step": epoch, "train_loss": 2.0 - 0.001 * i, "_step": i} for i, epoch in enumerate([0] * 50 + [1] * 50)]
    assert _own_counter(rows) is None


def test_a_table_row_without_the_counter_does_not_undo_it():
    rows = [{"iter": 10 * i, "loss": 3 - i / 50, "_step": i} for i in range(20)] + [{"samples": {"_type": "table"},
                                                                                      "_step": 20}]
    assert _own_counter(rows) == "iter"


def test_a_huge_counter_is_no_step():
    rows = [{"iter": 10 * i, "loss": 3 - i / 50, "_step": i} for i in range(20)] + [{"iter": 1e300, "loss": 2.0}]
    assert _own_counter(rows) is None


_CONFIG_HEAD = "{'actor_rollout_ref': {'actor': {'fsdp_config': {'param_offload': False},\n"


def test_a_verl_config_cut_before_its_model_section_says_nothing_of_the_method():
    facts = recipe_facts(_CONFIG_HEAD + "                                 'ppo_micro_batch_size': 4,\n")
    assert facts.get("console_framework") == "verl" and "console_method" not in facts


def test_a_whole_verl_config_without_a_lora_key_is_a_full_run():
    facts = recipe_facts(_CONFIG_HEAD + "  'model': {'path': 'Qwen/Qwen2.5-7B'}}}, 'trainer': {'total_epochs': 1}}\n")
    assert facts.get("console_method") == "full"


_VAL = "val-core/openai/gsm8k/reward/mean@1"


def _flat_val(seed: int, name: str = _VAL) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Series(rng.binomial(1319, 0.85, size=21) / 1319, index=np.arange(0, 210, 10), dtype="float64")


def test_a_flat_held_out_reward_is_no_decline():
    """A test set answered at the same rate throughout (binomial noise of 1319 questions): over 40 seeds, at most one
    reads as a decline (a 3-sigma test), where the robust noise of tied values once read far more."""
    train = pd.Series(0.5 + 0.25 * (1 - np.exp(-np.arange(1, 201) / 60)), index=np.arange(1, 201))
    declines = sum(bool(detect_reward_decline({"reward": train, _VAL: _flat_val(seed)}, Thresholds()))
                   for seed in range(40))
    assert declines <= 1


def test_several_held_out_rewards_are_judged_as_one():
    """Four test sets sliding together are one decline, named as their mean; four flat ones are none."""
    train = pd.Series(0.5 + 0.25 * (1 - np.exp(-np.arange(1, 201) / 60)), index=np.arange(1, 201))
    steps = np.arange(0, 210, 10)
    level = np.where(steps < 80, 0.85, 0.80)
    sliding = {f"val-core/set{k}/reward/mean@1": pd.Series(level + 0.001 * ((steps // 10 + k) % 3), index=steps)
               for k in range(4)}
    found = detect_reward_decline({"reward": train, **sliding}, Thresholds())
    assert [f.kind for f in found] == ["reward_decline"] and "the mean of 4 held-out rewards" in found[0].message
    flat = {f"val-core/set{k}/reward/mean@1": _flat_val(100 + k) for k in range(4)}
    assert detect_reward_decline({"reward": train, **flat}, Thresholds()) == []


PEAK, TOTAL = 1e-5, 1000
FP16_LINEAR = {"fp16": True, "lr_scheduler_type": "linear", "learning_rate": PEAK, "warmup_steps": 0, "warmup_ratio": 0.0}


def test_a_learning_rate_as_far_behind_at_its_first_point_as_at_its_last_is_no_skipped_update():
    """A DeepSpeed WarmupDecayLR's 10 warm-up steps under a Trainer that says linear, no warm-up: the rate is 10 steps
    behind the Trainer's schedule from the first logged point to the last, as no skipped update leaves it."""
    steps = np.arange(10, 1000, 10)
    lr = pd.Series(np.float32(PEAK * (1 - (steps - 10) / TOTAL)).astype("float64"), index=steps)
    assert detect_skips_from_lr_lag({"learning_rate": lr}, linear_fp16_schedule(FP16_LINEAR)) == []


def test_a_lag_that_grows_after_the_first_point_is_still_read():
    steps = np.arange(10, 1000, 10)
    lag = np.where(steps < 500, 10, np.where(steps < 510, 15, 20))
    lr = pd.Series(np.float32(PEAK * (1 - (steps - lag) / TOTAL)).astype("float64"), index=steps)
    (found,) = detect_skips_from_lr_lag({"learning_rate": lr}, linear_fp16_schedule(FP16_LINEAR))
    assert found.kind == "skipped_steps"
