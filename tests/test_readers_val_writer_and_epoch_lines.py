"""Tests of the readers: a loss tag in a val writer's folder, per-batch epoch lines.

From the review of the day's changes 8776af3..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

from support.notebook_and_findings import _analyze, _kinds


# ---- TensorBoard: bare `Loss` tag ----------------------------------------------------------------------------------


def test_a_loss_tag_in_a_val_writers_folder_is_the_eval_loss(tmp_path):
    """The common two-writer script: `SummaryWriter(f"{logdir}/train")` and `SummaryWriter(f"{logdir}/val")`, each
    `add_scalar("Loss", ...)`: a healthy training loss each step and a validation loss every 30 steps that rises
    (overfitting). The bare `Loss` tag is now read as the loss in both folders, so the val folder's points join the
    training loss: broken / divergence at 90 (before: `Loss` was not read at all; lowercase `loss` had the same
    misreading already). Fix belongs in forensics/ingest/tensorboard.py:_add_scalars_tags (a folder named for a
    held-out split, `val`, `valid`, `validation`, `eval`, `test`, makes its loss tag the eval loss, as
    _keras_callback_names does for Keras' `validation/`)."""
    from torch.utils.tensorboard import SummaryWriter

    rng = np.random.default_rng(0)
    train = SummaryWriter(str(tmp_path / "runs" / "exp1" / "train"))
    val = SummaryWriter(str(tmp_path / "runs" / "exp1" / "val"))
    for i in range(1, 301):
        train.add_scalar("Loss", 2.5 * np.exp(-i / 60) + 0.3 + rng.normal(0, 0.02), i)
        if i % 30 == 0:
            val.add_scalar("Loss", 1.2 + 0.25 * (i / 30 - 1), i)
    train.close()
    val.close()
    a = _analyze(tmp_path)
    assert not any(f.kind == "divergence" for f in a.findings), _kinds(a)
    assert "eval_loss" in a.timeline.metrics


def test_per_batch_epoch_lines_with_train_and_val_loss_stay_healthy(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"Epoch {e}, Loss: {2.5 - 0.01 * (e * 50 + b) + rng.normal(0, .05):.4f}, Val Loss: {2.6 - 0.3 * e:.4f}"
             for e in range(3) for b in range(50)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert a.status == "healthy", _kinds(a)
