"""Memorization dated for the kind of run (fx-memodate): a model trained from random weights whose memorization was
judged against a fine-tune's stricter level is dated no later than where its loss settled under the pre-training floor
(`memorization.dated_under_pretraining_floor`); a reward model's staircase at the epoch boundaries is dated where the
pairs come round again (`epoch_staircase.dated_at_the_pairs_return`).

Run with `python -m pytest -q tests/test_memorization_redated.py`.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.analyzers.epoch_staircase import dated_at_the_pairs_return
from forensics.analyzers.memorization import PRETRAINING_FLOOR, dated_under_pretraining_floor
from forensics.findings import Finding

CORPUS = Path(__file__).parent / "realworld"


def _memorized(step: int, level: float | None, kind: str = "memorization") -> Finding:
    evidence = {} if level is None else {"level": level}
    return Finding(kind, "warning", step, "loss falls ... (memorization).", end_step=100, metric="loss",
                   evidence=evidence)


def _fresh_model_loss() -> pd.Series:
    """One point an epoch from 7.3 (a fresh head) falling 0.6x an epoch to ~0.003: under 0.5 from epoch 7."""
    epochs = np.arange(1, 101)
    return pd.Series(0.003 + 7.3 * 0.6 ** (epochs - 1), index=epochs, dtype="float64")


def test_a_fresh_models_memorization_at_a_stricter_level_is_dated_where_it_settled_under_the_pretraining_floor():
    loss = _fresh_model_loss()
    under_floor = int(loss.index[np.argmax(loss.to_numpy() <= PRETRAINING_FLOOR)])
    found = dated_under_pretraining_floor(_memorized(13, 0.1), loss)
    assert (found.step, found.evidence["rule_step"]) == (under_floor, 13) and under_floor < 13
    assert f"Dated from step {under_floor}, where the loss settled under 0.5 nats a token" in found.message


@pytest.mark.parametrize("finding", [_memorized(13, PRETRAINING_FLOOR), _memorized(13, None),
                                     _memorized(13, 0.1, kind="loss_collapse"), _memorized(5, 0.1)])
def test_a_finding_at_the_floor_without_a_level_of_another_kind_or_already_earlier_keeps_its_date(finding):
    """At the floor itself the descent's levelling off dates it (Jayant-Guru-Shrivastava: judged at 4350, under 0.5
    from 4030); a finding already dated before the loss settled under the floor is not moved later."""
    assert dated_under_pretraining_floor(finding, _fresh_model_loss()) == finding


def test_a_loss_that_never_settles_under_the_floor_keeps_the_date():
    loss = pd.Series(np.linspace(3.0, 0.6, 50), index=np.arange(1, 51), dtype="float64")
    finding = _memorized(40, 0.1)
    assert dated_under_pretraining_floor(finding, loss) == finding


def _reward_log(level, epochs: int = 3, per_epoch: int = 100, every: int = 5) -> dict:
    """{loss, epoch} of a pairwise loss `level(epoch, fraction done)` logged every `every` steps."""
    at = np.arange(every, epochs * per_epoch + 1, every)
    epoch = at / per_epoch
    whole, done = np.floor(epoch - 1e-9), epoch - np.floor(epoch - 1e-9)
    noise = np.random.default_rng(0).normal(0.0, 0.005, len(at))
    return {"loss": pd.Series(level(whole, done) + noise, index=at), "epoch": pd.Series(epoch, index=at)}


def test_a_reward_models_staircase_is_dated_at_the_first_point_of_the_second_pass():
    """AimeeAyat_ATML-PA5's shape: 0.83 -> 0.57 over the first pass, then a drop at each pass start, flat inside."""
    metrics = _reward_log(lambda e, d: np.where(e == 0, 0.83 - 0.26 * np.minimum(d * 5, 1.0), 0.57 - 0.25 * e))
    found = dated_at_the_pairs_return(_memorized(210, 0.1), metrics)
    assert (found.step, found.evidence["rule_step"]) == (105, 210)
    assert "where the pairs come round again" in found.message


def test_a_reward_loss_falling_smoothly_across_the_passes_keeps_its_date():
    metrics = _reward_log(lambda e, d: 0.7 * np.exp(-(e + d) * 1.5))
    finding = _memorized(210, 0.1)
    assert dated_at_the_pairs_return(finding, metrics) == finding
    assert dated_at_the_pairs_return(_memorized(210, 0.1, kind="grad_norm_spike"), metrics).step == 210


@pytest.mark.parametrize("case", ["Roy19921010_WASP_DeepLearning_M3", "sdeepthikumar_shakespearean-llm",
                                  "AimeeAyat_ATML-PA5", "Jayant-Guru-Shrivastava_ERAV4-Session11-shakespeare-gpt2-124M",
                                  "Miki-Palmisano_BLOOMZ-Solidity_Train", "1120jm_AI_Project2"])
def test_the_corpus_runs_memorization_is_dated_within_the_judged_tolerance(case):
    """Roy's MiniGPT (was 13, judged 8 +- 4), sdeepthikumar's GPT (was 2381, judged 1960 +- 400) and AimeeAyat's reward
    model (was 6600, judged 3300 +- 200) move; Jayant's (at the floor), Miki's (16, judged 18 +- 3) and 1120jm's QLoRA
    staircase (a fine-tune: its level dates it) stay within theirs."""
    expected = json.loads((CORPUS / "expected" / f"{case}.json").read_text())["first_incident"]
    first = forensics.analyze(CORPUS / case).first_incident
    assert first.kind == "memorization" and abs(first.step - expected["step"]) <= expected["step_tolerance"]
