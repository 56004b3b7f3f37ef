"""Tests of the TensorBoard reader's step axis (ingest/tensorboard.py): epoch indexes and re-runs.

Day 11 TensorBoard step-axis fixes from a second read-only review (runs written with the real SummaryWriter):

* a tag logged at the epoch index 0..E beside a per-epoch counter of E epochs (an evaluation before training, then
  one after each epoch), its values written after training, goes to the first step (index 0) and to the end of
  epoch k (index k); index 0 never wraps round to the last step;
* training re-run from scratch three times or more in one writer (a notebook cell run again: each run restarts its
  step at 0 and its loss at the fresh model's level) stays one attempt per run, not one count with a loss spike at
  each restart; a per-epoch counter, whose loss at each restart carries on from where the epoch before ended, is
  still one count.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import forensics


START = 1_790_000_000.0  # wall time of the first batch
BATCH_S = 0.5


def _writer(folder: Path):
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    return SummaryWriter(log_dir=str(folder / "runs" / "exp"))


def _curve(step: int) -> float:
    """A run that learned: from about 2.5 down to about 0.5."""
    return 0.5 + 2.0 * math.exp(-step / 40)


def _write_counter_with_evals_after(folder: Path, losses: list[list[float]], evals: list[float]) -> Path:
    """`Loss/train` per batch at the batch index (a per-epoch counter); `Loss/val` at the epoch index, the list of
    evaluations (the first one before training) written once training is done."""
    writer, wall = _writer(folder), START
    for epoch_losses in losses:
        for batch, loss in enumerate(epoch_losses):
            writer.add_scalar("Loss/train", loss, batch, walltime=wall)
            wall += BATCH_S
    for epoch, val in enumerate(evals):
        writer.add_scalar("Loss/val", val, epoch, walltime=wall + epoch * 0.001)
    writer.close()
    return folder


def _epochs(level, epochs: int = 3, batches: int = 60, seed: int = 0) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [[level(e * batches + b) + 0.03 * rng.standard_normal() for b in range(batches)] for e in range(epochs)]


def test_an_eval_before_training_at_epoch_index_0_goes_to_the_first_step_not_the_last(tmp_path):
    run = _write_counter_with_evals_after(tmp_path, _epochs(_curve), [2.6, 0.9, 0.7, 0.65])
    eval_loss = forensics.load_timeline(run).series("eval_loss")
    assert eval_loss.index.tolist() == [0, 59, 119, 179], eval_loss
    assert eval_loss.iloc[0] == pytest.approx(2.6)
    a = forensics.analyze(run)
    assert a.status == "healthy", a.findings
    assert len(a.timeline.series("loss")) == 180, a.timeline.series("loss")
    assert not any(segment.abandoned for segment in a.timeline.segments), a.timeline.segments


def test_a_diverging_counter_with_a_pre_training_eval_is_broken_at_the_divergence(tmp_path):
    """Falls for an epoch, then climbs many-fold in the second and third and never comes back."""
    def diverging(step):
        return _curve(step) if step < 70 else 0.8 + 0.3 * (step - 70)
    run = _write_counter_with_evals_after(tmp_path, _epochs(diverging), [2.6, 0.9, 5.0, 20.0])
    a = forensics.analyze(run)
    assert a.status == "broken", a.findings
    assert a.first_incident.kind == "divergence" and 60 <= a.first_incident.step <= 120, a.first_incident


def test_evals_counted_from_1_after_training_go_to_the_ends_of_their_epochs(tmp_path):
    """No evaluation before training: epochs 1..E go to the ends of epochs 1..E, as before."""
    losses = _epochs(_curve)
    writer, wall = _writer(tmp_path), START
    for epoch_losses in losses:
        for batch, loss in enumerate(epoch_losses):
            writer.add_scalar("Loss/train", loss, batch, walltime=wall)
            wall += BATCH_S
    for epoch, val in enumerate([0.9, 0.7, 0.65], start=1):
        writer.add_scalar("Loss/val", val, epoch, walltime=wall + epoch * 0.001)
    writer.close()
    assert forensics.load_timeline(tmp_path).series("eval_loss").index.tolist() == [59, 119, 179]


def _write_reruns(folder: Path, runs: list[list[float]]) -> Path:
    """The same training loop run again from scratch in one notebook's writer: each run logs `Loss/train` from
    step 0."""
    writer, wall = _writer(folder), START
    for losses in runs:
        for step, loss in enumerate(losses):
            writer.add_scalar("Loss/train", loss, step, walltime=wall)
            wall += BATCH_S
        wall += 60.0  # the user reads the result and runs the cell again
    writer.close()
    return folder


def _reruns(level, runs: int = 3, steps: int = 300, seed: int = 1) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [[level(run, s) + 0.03 * rng.standard_normal() for s in range(steps)] for run in range(runs)]


def test_three_re_runs_from_scratch_in_one_writer_stay_three_attempts_not_one_count(tmp_path):
    run = _write_reruns(tmp_path, _reruns(lambda run, s: _curve(s)))
    a = forensics.analyze(run)
    assert a.status == "healthy", a.findings
    assert not any(f.kind == "loss_spike" for f in a.findings), a.findings
    assert a.timeline.series("loss").index.max() == 299


def test_re_runs_whose_last_diverges_are_broken_at_the_last_run_s_own_step(tmp_path):
    def level(run, s):
        return 0.5 + 0.02 * (s - 150) if run == 2 and s > 150 else _curve(s)
    a = forensics.analyze(_write_reruns(tmp_path, _reruns(level)))
    assert a.status == "broken", a.findings
    assert a.first_incident.kind == "divergence" and 150 <= a.first_incident.step <= 200, a.first_incident


def test_a_per_epoch_counter_whose_loss_carries_on_at_each_restart_is_still_one_count(tmp_path):
    """A healthy loop with `add_scalar("Loss/train", loss, batch_idx)`: each epoch starts a little above where the
    last one ended (the reshuffled data), far below where training began."""
    losses = _epochs(lambda g: _curve(g / 2) + (0.05 if g % 150 < 5 else 0.0), epochs=4, batches=150, seed=2)
    run = _write_reruns(tmp_path, losses)
    loss = forensics.load_timeline(run).series("loss")
    assert loss.index.max() == 4 * 150 - 1 and len(loss) == 4 * 150
    assert forensics.analyze(run).status == "healthy"
