"""Tests of the TensorBoard reader: a held-out group's loss in its own event file.

From the review of day 6's code changes (4385ad5..a6d3009): each test failed on the code before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import forensics


@pytest.mark.parametrize("group", ["evaluation", "testing", "heldout", "val_epoch", "test_set"])
def test_a_held_out_groups_loss_in_its_own_event_file_is_not_the_training_loss(tmp_path, group):
    """A script with one SummaryWriter for training (`train/loss`) and another, its own event file in the same
    folder, for evaluation (`evaluation/loss`, `testing/loss`, `val_epoch/loss`): the evaluation file has no tag
    named loss, and a run name's `<group>/loss` rule took the held-out loss for the training loss. The training
    loss fell from 3.8 to 0.9 while the held-out one rose 1.3 -> 4.0: read as one loss it was a divergence
    (broken); it is overfitting, or at least not the training loss."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    train = SummaryWriter(str(tmp_path / "runs"), filename_suffix=".train")
    for step in range(1, 201):
        train.add_scalar("train/loss", 3.0 * np.exp(-step / 50) + 0.8, step)
    train.close()
    held_out = SummaryWriter(str(tmp_path / "runs"), filename_suffix=".eval")
    for step in range(20, 201, 20):
        held_out.add_scalar(f"{group}/loss", 1.0 + 0.015 * step, step)
    held_out.close()
    a = forensics.analyze(tmp_path / "runs")
    assert len(a.timeline.series("loss")) == 200
    assert a.status != "broken", a.findings
