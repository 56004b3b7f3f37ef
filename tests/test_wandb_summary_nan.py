"""Tests of the W&B reader (ingest/wandb.py): a NaN in the summary.

From the day-11 reading fixes from a read-only review (runs it built with the real writers):

* a NaN that only a W&B summary holds (no .wandb history) is said as the last value, not "never finite before",
  with where the history is;"""
from __future__ import annotations

import json
import math
from pathlib import Path

import forensics


def _wandb_run(folder: Path, summary: dict) -> Path:
    """A W&B run folder as `wandb` leaves it where its .wandb log was not kept: files/wandb-summary.json (json.dumps
    writes NaN as W&B's summary does) and files/config.yaml."""
    files = folder / "wandb" / "run-20251127_073000-abcd1234" / "files"
    files.mkdir(parents=True)
    (files / "wandb-summary.json").write_text(json.dumps(summary))
    (files / "config.yaml").write_text("wandb_version: 1\nlearning_rate:\n  value: 0.0002\n")
    return folder


_NAN_SUMMARY = {"train/loss": math.nan, "train/grad_norm": math.nan, "train/learning_rate": 1e-20,
                "train/epoch": 3.0, "train/global_step": 300, "_step": 60, "_runtime": 1000,
                "_timestamp": 1700000000.0}


def test_a_nan_in_a_wandb_summary_alone_says_only_the_last_value_is_known(tmp_path):
    a = forensics.analyze(_wandb_run(tmp_path, _NAN_SUMMARY))
    assert a.status == "broken"
    message = a.first_incident.message
    assert "never finite before" not in message, message
    assert "last value" in message and "history" in message and "output.log" in message, message


def test_a_nan_in_a_wandb_summary_beside_the_history_keeps_the_history_s_account(tmp_path):
    """The same summary beside the Trainer's trainer_state.json, whose log_history holds every step: the NaN is dated
    from the history (last finite value and its step), not from the summary."""
    history = [{"step": s, "loss": 2.0 - s / 500, "grad_norm": 1.0, "learning_rate": 2e-4, "epoch": s / 100}
               for s in range(10, 250, 10)]
    history += [{"step": s, "loss": math.nan, "grad_norm": math.nan, "learning_rate": 2e-4, "epoch": s / 100}
                for s in range(250, 310, 10)]
    run = _wandb_run(tmp_path, _NAN_SUMMARY)
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 300, "log_history": history}))
    a = forensics.analyze(run)
    assert a.status == "broken" and a.first_incident.step == 250, a.first_incident
    assert "last finite" in a.first_incident.message and "summary" not in a.first_incident.message
