"""Tests of ingest/running_means.py: running means near zero, rounded per-step losses.

From the review of day 6's code changes (4385ad5..a6d3009): each test failed on the code before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import forensics
from test_running_means import _dvclive_folder, _running_means
from forensics.ingest.running_means import per_step_values


def test_a_running_mean_over_batches_near_zero_implies_no_negative_loss(tmp_path):
    """Keras' `batch_loss` (float32 in the event file) over a model that memorizes: batches at ~1e-6 nats inside an
    epoch whose running mean is still ~0.1. Undoing the mean multiplies the float32 rounding by n, so a batch at
    1e-6 reads as -3e-5: a value the loss cannot take, made by the reading, not by the run. The implied values are
    held to the metric's bounds; the run is a memorization warning, not an impossible loss."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    rng = np.random.default_rng(0)
    batches = np.abs((3 * np.exp(-np.arange(4000) / 150) + 1e-6 * rng.random(4000))
                     * (1 + 0.2 * rng.standard_normal(4000)))
    writer = SummaryWriter(str(tmp_path / "logs" / "train"), filename_suffix="")
    for step, value in enumerate(_running_means(batches, 2000), start=1):
        writer.add_scalar("batch_loss", float(value), step, new_style=True)
        if step % 2000 == 0:
            writer.add_scalar("epoch_loss", float(value), step // 2000 - 1, new_style=True)
    writer.close()
    a = forensics.analyze(tmp_path / "logs")
    assert a.timeline.series("loss").min() >= 0.0
    assert not [f for f in a.findings if f.kind == "impossible_loss"], a.findings
    assert a.first_incident is not None and a.first_incident.kind == "memorization", a.findings


def test_a_per_step_loss_rounded_to_four_decimals_is_not_a_running_mean(tmp_path):
    """A smooth per-step loss written to 4 decimals (HF's rounding of `loss`, DVCLive's callback at each log): its
    values hold still over several steps and then move by 0.0001. Read as a running mean, each 0.0001 is n times
    that in one batch: dips of 0.3 nats a few thousand steps in that the run never had. A log rounded that coarsely
    cannot be undone; it is read as it was written."""
    rng = np.random.default_rng(0)
    steps = np.arange(3000)
    values = np.round(2.0 + 0.5 * np.exp(-steps / 3000) + 1e-5 * rng.standard_normal(3000), 4)
    assert per_step_values(steps, values) is None
    a = forensics.analyze(_dvclive_folder(tmp_path, values).parent)
    assert np.allclose(a.timeline.series("loss").to_numpy(), values)
    assert not a.skipped, a.skipped
