"""Tests of the TensorBoard reader's split folders: a folder named test, Keras train/validation.

From the adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch). A failing test was a
misfire; passing tests record shapes that held."""
from __future__ import annotations

import numpy as np

from support.notebook_and_findings import _analyze, _kinds


# ---- (5) a writer's own split folder ---------------------------------------------------------------------------------


def test_a_lone_writer_in_a_folder_named_test_keeps_its_training_loss(tmp_path):
    """A quick experiment logged with `SummaryWriter("runs/test")` (a very common name for a trial run), its only
    writer, `add_scalar("Loss", loss, step)` each step: the training loss. The folder name `test` now makes it the
    eval loss, so the run has no training loss at all. Fix: forensics/ingest/tensorboard.py:_add_scalars_tags (read a
    bare folder name as a split only beside a sibling writer folder of the other split, `train/` next to `val/`;
    `loss_<key>/` as add_scalars writes it may stand alone)."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path / "runs" / "test"))
    for i in range(1, 201):
        w.add_scalar("Loss", 2.5 * np.exp(-i / 50) + 0.4, i)
    w.close()
    a = _analyze(tmp_path)
    assert "loss" in a.timeline.metrics, a.timeline.metrics


def test_keras_train_and_validation_folders_with_epoch_loss_held(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    tr, va = SummaryWriter(str(tmp_path / "logs" / "train")), SummaryWriter(str(tmp_path / "logs" / "validation"))
    for e in range(10):
        tr.add_scalar("epoch_loss", 2.0 - 0.15 * e, e)
        va.add_scalar("epoch_loss", 2.1 - 0.12 * e, e)
    tr.close()
    va.close()
    a = _analyze(tmp_path)
    assert {"loss", "eval_loss"} <= set(a.timeline.metrics) and a.status == "healthy", (a.timeline.metrics, _kinds(a))
