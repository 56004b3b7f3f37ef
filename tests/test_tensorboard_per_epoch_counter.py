"""Tests of the TensorBoard reader's step axis (ingest/tensorboard.py): a counter that restarts
each epoch, evals at the epoch index.

From the day-11 reading fixes from a read-only review (runs it built with the real writers):

* a TensorBoard tag whose step restarts each epoch (`add_scalar("Loss/train", loss, batch_idx)`) in one event file
  (one writer: no resume can happen inside it) is one continuous count, not a resume per epoch;
* a tag logged at the epoch index (`add_scalar("Loss/val", loss, epoch)`) beside a per-step training loss is placed
  on the training steps by its wall time;"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import forensics


EPOCHS, BATCHES = 5, 200
START = 1_790_000_000.0  # wall time of the first batch
BATCH_S, EVAL_S = 0.5, 30.0  # a batch's time, an evaluation's time


def _per_batch_losses(seed: int, level, epochs: int = EPOCHS, batches: int = BATCHES) -> list[list[float]]:
    """Per-batch losses of each epoch: `level(epoch, batch)` plus seeded noise."""
    rng = np.random.default_rng(seed)
    return [[level(e, b) + 0.05 * rng.standard_normal() for b in range(batches)] for e in range(epochs)]


def _write_epoch_loop(folder: Path, losses, val_losses, train_step, evals_after_training: bool = False) -> Path:
    """A plain PyTorch loop's SummaryWriter: `Loss/train` per batch at `train_step(epoch, batch)`, `Loss/val` at the
    epoch index after each epoch's evaluation (or, `evals_after_training`, the list of them written once training
    is done); wall times as the loop would stamp them."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(folder / "runs" / "exp"))
    wall = START
    for epoch, (epoch_losses, val) in enumerate(zip(losses, val_losses)):
        for batch, loss in enumerate(epoch_losses):
            writer.add_scalar("Loss/train", loss, train_step(epoch, batch), walltime=wall)
            wall += BATCH_S
        wall += EVAL_S
        if not evals_after_training:
            writer.add_scalar("Loss/val", val, epoch, walltime=wall)
        wall += BATCH_S
    for epoch, val in enumerate(val_losses if evals_after_training else ()):
        writer.add_scalar("Loss/val", val, epoch, walltime=wall + epoch * 0.001)
    writer.close()
    return folder


def _per_epoch_counter(epoch, batch):
    return batch


def _global_step(epoch, batch):
    return epoch * BATCHES + batch


def _healthy(e, b):
    return 2.5 * math.exp(-(e * BATCHES + b) / 300) + 1.0


def _diverging(e, b):
    """Falls for two epochs, then climbs to ~10 within the third and stays there."""
    step = e * BATCHES + b
    return _healthy(e, b) if step < 2 * BATCHES else min(10.0, 1.3 + 0.1 * (step - 2 * BATCHES))


def test_a_per_epoch_counter_that_diverges_is_broken_at_its_continued_step(tmp_path):
    losses = _per_batch_losses(0, _diverging)
    run = _write_epoch_loop(tmp_path, losses, [2.1, 1.5, 7.7, 9.9, 9.9], _per_epoch_counter)
    a = forensics.analyze(run)
    assert a.status == "broken", a.first_incident
    assert a.first_incident.kind == "divergence" and 2 * BATCHES <= a.first_incident.step <= 3 * BATCHES, \
        a.first_incident
    assert len(a.timeline.segments) == 1, a.timeline.segments


def test_a_per_epoch_counter_that_turns_nan_is_broken_where_the_nan_starts(tmp_path):
    losses = _per_batch_losses(1, _healthy)
    losses[2:] = [[math.nan] * BATCHES for _ in losses[2:]]
    run = _write_epoch_loop(tmp_path, losses, [2.1, 1.5, math.nan, math.nan, math.nan], _per_epoch_counter)
    a = forensics.analyze(run)
    assert a.status == "broken"
    assert a.first_incident.kind in ("nonfinite_metric", "nonfinite_loss"), a.first_incident
    assert a.first_incident.step == 2 * BATCHES, a.first_incident
    assert "never finite" not in a.first_incident.message


def test_a_per_epoch_counter_of_a_run_that_learned_is_healthy_on_one_axis(tmp_path):
    run = _write_epoch_loop(tmp_path, _per_batch_losses(2, _healthy), [2.1, 1.6, 1.4, 1.3, 1.25], _per_epoch_counter)
    a = forensics.analyze(run)
    assert a.status == "healthy", a.findings
    loss = a.timeline.series("loss")
    assert loss.index.min() == 0 and loss.index.max() == EPOCHS * BATCHES - 1 and len(loss) == EPOCHS * BATCHES


def test_epoch_values_written_after_training_go_to_the_ends_of_the_counter_s_epochs(tmp_path):
    """The loop keeps its validation losses in a list and writes them once training is done: their wall times say
    nothing, the per-epoch counter's restarts say where each epoch ended."""
    losses = _per_batch_losses(6, _healthy)
    losses[2:] = [[math.nan] * BATCHES for _ in losses[2:]]
    run = _write_epoch_loop(tmp_path, losses, [2.1, 1.5, math.nan, math.nan, math.nan], _per_epoch_counter,
                            evals_after_training=True)
    eval_steps = forensics.load_timeline(run).series("eval_loss").index.tolist()
    assert eval_steps == [(e + 1) * BATCHES - 1 for e in range(EPOCHS)], eval_steps
    a = forensics.analyze(run)
    assert a.status == "broken" and a.first_incident.metric == "loss" and a.first_incident.step == 2 * BATCHES, \
        a.first_incident


def test_a_global_step_run_reads_as_before_and_a_single_restart_stays_a_new_attempt(tmp_path):
    """A per-step run needs no continuation (no note); one restart in one file (a re-run in the same writer, or a
    second epoch) cannot be told from a per-epoch counter and stays an attempt of its own."""
    run = _write_epoch_loop(tmp_path / "global", _per_batch_losses(3, _healthy), [2.1, 1.6, 1.4, 1.3, 1.25],
                            _global_step)
    a = forensics.analyze(run)
    assert a.status == "healthy" and not any("restarted each epoch" in str(s) for s in a.skipped), a.skipped
    twice = _write_epoch_loop(tmp_path / "twice", _per_batch_losses(4, _healthy)[:2], [2.1, 1.6], _per_epoch_counter)
    steps = forensics.load_timeline(twice).series("loss").index
    assert steps.max() == BATCHES - 1, steps.max()


def test_an_eval_at_the_epoch_index_is_placed_on_the_training_steps_by_wall_time(tmp_path):
    """Ten epochs of 100 batches: eval loss falls for five epochs and rises from the sixth (logged at 5, after step
    599) while the training loss keeps falling: the overfitting begins where the sixth evaluation was run, not at 5."""
    losses = _per_batch_losses(5, lambda e, b: 2.5 * math.exp(-(e * 100 + b) / 300) + 0.5, epochs=10, batches=100)
    evals = [2.0, 1.7, 1.5, 1.4, 1.3, 1.45, 1.6, 1.75, 1.9, 2.05]
    run = _write_epoch_loop(tmp_path, losses, evals, lambda e, b: e * 100 + b)
    eval_steps = forensics.load_timeline(run).series("eval_loss").index.tolist()
    assert eval_steps == [(e + 1) * 100 - 1 for e in range(10)], eval_steps
    a = forensics.analyze(run)
    overfit = [f for f in a.findings if f.kind == "overfitting"]
    assert overfit and 499 <= overfit[0].step <= 599, a.findings


def test_an_eval_logged_at_the_global_step_stays_where_it_was_logged(tmp_path):
    """The same loop logging its evaluation at the global step: already on the training axis, nothing moves."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "runs" / "exp"))
    wall = START
    for step in range(EPOCHS * BATCHES):
        writer.add_scalar("Loss/train", _healthy(0, step), step, walltime=wall)
        wall += BATCH_S
        if step % BATCHES == BATCHES - 1:
            writer.add_scalar("Loss/val", 1.5 - 0.01 * step / BATCHES, step, walltime=wall)
    writer.close()
    steps = forensics.load_timeline(tmp_path).series("eval_loss").index.tolist()
    assert steps == [(e + 1) * BATCHES - 1 for e in range(EPOCHS)], steps
