"""A loss or accuracy logged as its running mean since the epoch began is read as the per-step values it implies.

Keras hands its callbacks each metric's mean over the epoch so far, batch by batch, and its TensorBoard callback
writes those as `batch_<name>`; a hand-written loop logging a `keras.metrics.Mean` to DVCLive does the same
(dacbd's translation model, tests/realworld: a running mean of 1.22 at the end hid per-batch losses of 0.007 nats).
Per-step logs that only look smooth (window means, a noise-free curve) are left as they are.
"""
from __future__ import annotations

import numpy as np
import pytest

from forensics import analyze
from forensics.ingest import dvclive
from forensics.ingest.running_means import per_step_values


def _running_means(batches: np.ndarray, epoch: int) -> np.ndarray:
    """Keras' `batch_loss`: each batch's mean over the epoch so far, restarting every `epoch` batches."""
    out = np.empty_like(batches)
    for start in range(0, len(batches), epoch):
        part = batches[start:start + epoch]
        out[start:start + epoch] = np.cumsum(part) / np.arange(1, len(part) + 1)
    return out


def _noisy_batches(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (4.0 * np.exp(-np.arange(n) / 400) + 1.0) * (1 + 0.1 * rng.standard_normal(n))


def test_running_means_over_three_epochs_give_back_every_batch():
    batches = _noisy_batches(900)
    implied = per_step_values(np.arange(1, 901), _running_means(batches, 300))
    assert implied is not None
    assert np.allclose(implied, batches, atol=1e-9)


def test_a_noisy_per_step_loss_is_not_a_running_mean():
    """A per-step loss's noise soon outgrows its level over n: read as a mean, it would imply negative batches."""
    batches = _noisy_batches(900)
    assert per_step_values(np.arange(900), batches) is None


def test_a_smooth_per_step_curve_is_not_a_running_mean():
    """A noise-free curve (a full-batch loss) falling like a power law implies values as smooth as itself, where a
    mean of noisy batches is far smoother than they are."""
    n = np.arange(1, 2001, dtype="float64")
    assert per_step_values(n.astype("int64"), 5 * n ** -0.3) is None


def test_window_means_logged_every_fifty_steps_are_not_a_running_mean():
    """An HF Trainer's loss through DVCLiveCallback: each point the mean of a 50-step window, at consecutive DVCLive
    steps, smooth and slowly falling (msh2481's pre-training, tests/realworld: 2.27 -> 1.99 over 1500 points). Read
    greedily it restarts at uneven lengths without a jump: not epochs."""
    rng = np.random.default_rng(1)
    windows = 2.0 + 0.27 * np.exp(-np.arange(1500) / 300) + 0.01 * rng.standard_normal(1500)
    assert per_step_values(np.arange(1500), windows) is None


def test_restarts_at_uneven_lengths_are_not_epochs():
    batches = _noisy_batches(900)
    means = np.concatenate([_running_means(batches[:300], 300), _running_means(batches[300:], 250)])
    assert per_step_values(np.arange(900), means) is None


def _dvclive_folder(folder, values, name="loss"):
    plots = folder / "dvclive" / "plots" / "metrics" / "train"
    plots.mkdir(parents=True)
    rows = "".join(f"{step}\t{float(value)!r}\n" for step, value in enumerate(values))
    (plots / f"{name}.tsv").write_text(f"step\t{name}\n{rows}")
    return folder / "dvclive"


def test_dvclive_running_mean_loss_is_read_per_step_with_a_note(tmp_path):
    batches = _noisy_batches(600)
    records = dvclive.read(_dvclive_folder(tmp_path, _running_means(batches, 600)))
    loss = records.frame[records.frame["metric"] == "loss"].sort_values("step")["value"].to_numpy()
    assert np.allclose(loss, batches, atol=1e-9)
    assert len(records.notes) == 1 and "running mean" in records.notes[0], records.notes


def test_a_collapse_hidden_by_a_running_mean_is_found(tmp_path):
    """Per-batch losses that fall to ~0.005 nats within the one epoch logged, as a running mean that ends at 1.3 with
    nothing under it: the run is judged on the batches, whose loss went to ~0."""
    rng = np.random.default_rng(2)
    n = np.arange(1600)
    batches = np.where(n < 400, 8.9 * np.exp(-n / 80), 0.005) * (1 + 0.1 * rng.standard_normal(1600)) + 1e-4
    means = _running_means(np.abs(batches), 1600)
    assert means[-1] > 0.1
    a = analyze(_dvclive_folder(tmp_path, means).parent)
    assert a.status != "healthy" and a.first_incident.kind in ("memorization", "loss_collapse"), a.findings
    assert a.first_incident.step < 800, a.first_incident


def test_keras_batch_loss_is_read_per_batch_and_shows_a_spike(tmp_path):
    """Keras' TensorBoard callback with `update_freq` set: `batch_loss` the epoch's running mean. A batch at 10x its
    neighbours moves the mean at batch 250 of an epoch by 4%; read per batch, it is the spike it was."""
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter

    batches = _noisy_batches(900, seed=3)
    batches[549] = 10 * batches[548]
    means = _running_means(batches, 300)
    writer = SummaryWriter(str(tmp_path / "logs" / "train"), filename_suffix="")
    for step, value in enumerate(means, start=1):
        writer.add_scalar("batch_loss", float(value), step, new_style=True)
        if step % 300 == 0:
            writer.add_scalar("epoch_loss", float(value), step // 300 - 1, new_style=True)
    writer.close()
    a = analyze(tmp_path / "logs")
    loss = a.timeline.series("loss")
    assert loss.loc[550] == pytest.approx(batches[549], rel=1e-3), loss.loc[545:555]
    assert any("running mean" in str(s) for s in a.skipped), a.skipped
    assert any(f.kind == "loss_spike" and f.step == 550 for f in a.findings), a.findings


def test_a_running_mean_read_per_step_is_a_note_not_a_file_read_in_part(tmp_path):
    """The report's line for it: the folder was read whole; `Skipped` would say files were left out."""
    from forensics.report.text import brief_text

    batches = _noisy_batches(600)
    a = analyze(_dvclive_folder(tmp_path, _running_means(batches, 600)).parent)
    assert [s.note for s in a.skipped] == [True]
    text = brief_text(a)
    assert "could not be read in full" not in text and "1 note on how the records were taken" in text, text
