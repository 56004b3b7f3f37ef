"""Tests of the run profile's framework (profile/): the HF Trainer's TensorBoard tags.

From the day-11 reading fixes from a read-only review (runs it built with the real writers):

* transformers' TensorBoardCallback tags alone (`train/loss`, `train/epoch`, `train/learning_rate`, `eval/loss`) name
  the Hugging Face Trainer, as the same numbers in trainer_state.json do;"""
from __future__ import annotations

import math
from pathlib import Path
import pytest

import forensics


EPOCHS, BATCHES = 5, 200


def _healthy(e, b):
    return 2.5 * math.exp(-(e * BATCHES + b) / 300) + 1.0


def _write_hf_callback_tags(folder: Path, extra_tags: tuple[str, ...] = ()) -> Path:
    """What transformers' TensorBoardCallback writes for a Trainer run (rewrite_logs: `train/` and `eval/` prefixes),
    without its `args` / `model_config` text summaries."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(folder / "runs" / "Nov27_07-30-00_host"))
    for step in range(10, 510, 10):
        writer.add_scalar("train/loss", _healthy(0, step), step)
        writer.add_scalar("train/grad_norm", 1.0 + 0.1 * math.sin(step), step)
        writer.add_scalar("train/learning_rate", 2e-5 * (1 - step / 500), step)
        writer.add_scalar("train/epoch", step / 500, step)
        for tag in extra_tags:
            writer.add_scalar(tag, 0.5, step)
        if step % 100 == 0:
            writer.add_scalar("eval/loss", 1.5 - step / 5000, step)
    writer.close()
    return folder


def test_the_trainer_tensorboard_callback_tags_alone_name_the_hf_trainer(tmp_path):
    profile = forensics.analyze(_write_hf_callback_tags(tmp_path)).run_profile.to_dict()
    assert profile["framework"] == "hf_trainer", profile
    assert "TensorBoardCallback" in profile["evidence"]["framework"], profile["evidence"]


def test_tensorboard_tags_beside_other_tags_do_not_name_the_trainer(tmp_path):
    """A loop of one's own that happens to log `train/epoch` and `train/learning_rate` beside its own tags."""
    profile = forensics.analyze(_write_hf_callback_tags(tmp_path, ("accuracy",))).run_profile.to_dict()
    assert profile["framework"] == "unknown", profile
