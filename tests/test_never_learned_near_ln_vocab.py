"""Tests of no_learning_evidence for a run from random weights that ended still near ln(vocabulary).

A model from random weights whose loss fell but ended its run still near ln(vocabulary): no evidence of learning.

Token frequencies alone take a language model to about 0.7-0.8 of ln V. A loss that starts at ln V and, at the end
of the run's planned epochs, is still over 0.85 of it has not reached even that, however smoothly it fell (a 4-wide
BERT2BERT built from a config, 10.37 -> 9.43 over its one epoch, ln 32000 = 10.37: judged warning). A healthy
pre-training run of the same shape falls well under that level; one logged over its first few hundred steps only, still
near ln V, may be on its way down and is left alone.
"""
from __future__ import annotations

import json
import math

import numpy as np

import forensics

VOCAB = 32000
LN_V = math.log(VOCAB)


def _fell_to(end_share: float, n: int = 60) -> list[float]:
    """n losses from ln V falling smoothly (faster at first) to end_share x ln V, with a little noise."""
    rng = np.random.default_rng(7)
    shape = 1 - np.exp(-4 * np.arange(n) / n)
    values = LN_V - (LN_V - end_share * LN_V) * shape / shape[-1]
    return [round(float(v + rng.normal(0, 0.003)), 4) for v in values]


def _scratch_run(tmp_path, losses, epochs_done=1.0, num_train_epochs=1):
    run = tmp_path / "checkpoint-6000"
    run.mkdir()
    n = len(losses)
    history = [{"step": 100 * (i + 1), "epoch": round(epochs_done * (i + 1) / n, 4), "loss": v,
                "learning_rate": 5e-5 * min(1.0, (i + 1) / 5) * (1 - i / n)} for i, v in enumerate(losses)]
    planned = round(100 * n * num_train_epochs / epochs_done)
    state = {"global_step": 100 * n, "max_steps": planned, "num_train_epochs": num_train_epochs,
             "logging_steps": 100, "log_history": history}
    (run / "trainer_state.json").write_text(json.dumps(state))
    config = {"_name_or_path": "", "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 4,
              "n_layer": 2, "n_head": 2, "n_positions": 512, "vocab_size": VOCAB}
    (run / "config.json").write_text(json.dumps(config))
    return run


def test_a_run_from_ln_vocab_ending_its_epoch_at_91_percent_of_it_warns_no_learning_evidence(tmp_path):
    a = forensics.analyze(_scratch_run(tmp_path, _fell_to(0.91)))
    assert a.status == "warning"
    found = [f for f in a.findings if f.kind == "no_learning_evidence"]
    assert len(found) == 1 and found[0].severity == "warning"
    assert f"91% of ln {VOCAB}" in found[0].message


def test_a_run_from_ln_vocab_ending_well_under_it_is_healthy(tmp_path):
    a = forensics.analyze(_scratch_run(tmp_path, _fell_to(0.45)))
    assert a.status == "healthy" and not a.findings


def test_a_log_of_the_first_steps_only_still_near_ln_vocab_is_not_judged_so(tmp_path):
    """The same curve logged a tenth of the way into a ten-epoch run: still falling, the run far from its end."""
    a = forensics.analyze(_scratch_run(tmp_path, _fell_to(0.91), epochs_done=1.0, num_train_epochs=10))
    assert not any(f.kind == "no_learning_evidence" for f in a.findings)
