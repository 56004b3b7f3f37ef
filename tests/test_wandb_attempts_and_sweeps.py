"""Tests of the W&B folder reader: attempts of one job, sweeps, overlapping runs.

From the reading gaps found on real runs (batches AQ7-AQ9)."""
from __future__ import annotations

import json

import pytest

import forensics
from forensics.errors import SeveralRuns


def _losses(folder):
    """{step: loss} as the analysis of `folder` reads them."""
    rows = forensics.analyze(folder, check_checkpoints=False).timeline.final()
    return {int(r.step): r.value for r in rows[rows["metric"] == "loss"].itertuples()}


# ---- (3) a W&B folder of several attempts of one job --------------------------------------------------------------


def _wandb_run(root, stamp, run_id, start, end, last_step, lr=2e-4, output_dir="out", finished=False):
    """A W&B run folder as an online run leaves it beside the HF Trainer (files/config.yaml with W&B's own
    `_wandb.start_time`, files/wandb-summary.json with the last value of each metric and `_timestamp`)."""
    files = root / "wandb" / f"run-{stamp}-{run_id}" / "files"
    files.mkdir(parents=True)
    config = {"learning_rate": lr, "num_train_epochs": 3, "per_device_train_batch_size": 8, "seed": 42,
              "output_dir": output_dir, "run_name": output_dir, "logging_steps": 25}
    text = ("wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    python_version: 3.12.3\n    cli_version: 0.16.6\n"
            f"    framework: huggingface\n    start_time: {start}\n")
    text += "".join(f"{key}:\n  desc: null\n  value: {value}\n" for key, value in config.items())
    (files / "config.yaml").write_text(text)
    summary = {"train/loss": 0.5 + 1.0 / (1 + last_step / 100), "train/learning_rate": lr / 2,
               "train/epoch": 3.0 * last_step / 900, "train/global_step": last_step, "_timestamp": end,
               "_runtime": end - start, "_step": last_step // 25}
    if finished:
        summary.update({"train_runtime": end - start, "train_loss": 0.9, "total_flos": 1e17})
    (files / "wandb-summary.json").write_text(json.dumps(summary))


def test_a_wandb_folder_of_attempts_of_one_job_is_judged_on_the_last_one_that_finished(tmp_path):
    """Three W&B runs and nothing else: two attempts that stopped (one renamed its output folder) and, begun after
    both ended, the one that finished at the furthest step: that one is analyzed, the others named in a note
    (before: SeveralRuns, no verdict)."""
    _wandb_run(tmp_path, "20240430_104212", "aaaa1111", 1714441332.0, 1714442433.7, 100)
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240502_104635", "cccc3333", 1714614395.0, 1714870029.8, 900, output_dir="out-2",
               finished=True)
    a = forensics.analyze(tmp_path, check_checkpoints=False)
    assert sorted(_losses(tmp_path)) == [900]
    note = next(s.reason for s in a.skipped if "earlier attempts" in s.reason)
    assert "aaaa1111" in note and "bbbb2222" in note and "cccc3333" in note


def test_a_wandb_sweep_is_still_several_runs(tmp_path):
    """The same runs with another learning rate in the last one (a sweep, not a retry): no run is picked."""
    _wandb_run(tmp_path, "20240430_104212", "aaaa1111", 1714441332.0, 1714442433.7, 100)
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240502_104635", "cccc3333", 1714614395.0, 1714870029.8, 900, lr=1e-4, finished=True)
    with pytest.raises(SeveralRuns):
        forensics.analyze(tmp_path, check_checkpoints=False)


def test_overlapping_wandb_runs_of_one_config_are_still_several_runs(tmp_path):
    """Runs of one config that ran at the same time (one a rank, or two jobs at once): no run is picked."""
    _wandb_run(tmp_path, "20240430_111132", "bbbb2222", 1714443092.0, 1714612829.4, 600)
    _wandb_run(tmp_path, "20240430_111140", "cccc3333", 1714443100.0, 1714870029.8, 900, finished=True)
    with pytest.raises(SeveralRuns):
        forensics.analyze(tmp_path, check_checkpoints=False)
