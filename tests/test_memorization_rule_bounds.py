"""Memorization's rules kept to the runs they were written for (forensics/analyzers/memorization.py, fresh_passes.py):
the pre-training floor dates a memorization only from random weights; memorized in a few points is a short log's rule.

From branch fx-review3a (review of session 22's analyzer changes: each behaviour test FAILS on main at 57e0ca20 and
passes after; its control ('stays silent', 'keeps') holds before and after)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

import forensics
from forensics.config import Thresholds


# ---- 2. the pre-training floor dates a memorization only from random weights -----------------------------------------


def _pretraining_run(tmp_path, name: str, base: str | None):
    """A LLaMA-Factory `stage: pt` full run, one point an epoch over 100 epochs from 3.0 (a trained model's start, far
    under ln(vocabulary)) to ~0.003, no eval loss; `base` its model_name_or_path (None: none named)."""
    run = tmp_path / name
    run.mkdir()
    epochs = np.arange(1, 101)
    loss = 0.003 + 3.0 * 0.8 ** (epochs - 1)
    history = [{"epoch": float(e), "step": int(e) * 10, "loss": float(v), "learning_rate": 1e-5}
               for e, v in zip(epochs, loss)]
    (run / "trainer_state.json").write_text(json.dumps({"log_history": history, "global_step": 1000}))
    args = ["stage: pt", "finetuning_type: full", "learning_rate: 1.0e-05", "num_train_epochs: 100.0"]
    (run / "training_args.yaml").write_text("\n".join(args + ([f"model_name_or_path: {base}"] if base else [])) + "\n")
    return forensics.analyze(run)


def test_continued_pretraining_of_a_named_base_keeps_the_memorization_date_its_rule_gave(tmp_path):
    continued = _pretraining_run(tmp_path, "continued", "Qwen/Qwen2.5-0.5B")
    assert (continued.run_profile.objective, continued.run_profile.method) == ("pretrain", "full")
    found = next(f for f in continued.findings if f.kind == "memorization")
    assert "pretraining_floor_step" not in found.evidence, found


def test_pretraining_that_names_no_base_is_still_dated_under_the_pretraining_floor(tmp_path):
    scratch = _pretraining_run(tmp_path, "scratch", None)
    found = next(f for f in scratch.findings if f.kind == "memorization")
    assert found.evidence.get("pretraining_floor_step") == found.step, found


# ---- 4. memorized in a few points: a short log only ------------------------------------------------------------------

_WHY = " (from random weights)"


def _falling(n: int) -> pd.Series:
    """`n` points, lower at each one: from 10.98 (ln 50304, a fresh GPT-2) down to 0.6, then 0.395 and 0.097."""
    return pd.Series(np.concatenate([np.linspace(10.98, 0.6, n - 2), [0.395, 0.097]]), index=np.arange(n) * 50)


def test_a_long_log_falling_at_every_point_to_under_the_floor_is_left_to_the_other_rules():
    """Forty prints falling at each, only the last two under 0.5: the rule for a short log (5 and 9 prints) would call
    any long descent memorized by its last two points; a long log shows whether the loss settled, and the other
    rules read that (here: it had not)."""
    from forensics.analyzers.fresh_passes import memorized_in_few_points
    from forensics.analyzers.memorization import PRETRAINING_FLOOR, STAIR_LEVEL, memorized_from_scratch
    loss = _falling(40)
    assert memorized_in_few_points(loss, PRETRAINING_FLOOR, STAIR_LEVEL, _WHY) == []
    assert not [f for f in memorized_from_scratch({"loss": loss}, Thresholds()) if "few_points" in f.evidence]


def test_nine_prints_falling_at_every_point_to_under_the_floor_are_still_memorized():
    """Azreal18_TSAI-ERAv2-S21's length: nine prints every 50 steps, 10.98 ... 0.395, 0.097."""
    from forensics.analyzers.fresh_passes import memorized_in_few_points
    from forensics.analyzers.memorization import PRETRAINING_FLOOR, STAIR_LEVEL
    found = memorized_in_few_points(_falling(9), PRETRAINING_FLOOR, STAIR_LEVEL, _WHY)
    assert [(f.kind, f.evidence["few_points"]) for f in found] == [("memorization", 9)]
