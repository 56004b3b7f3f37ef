"""An epoch that prints each batch's loss, then its average over the training batches, then the same for the
validation batches (ingest.console_lines.batch_averages): 2b3o4o_transformer-implementation's `train_one_epoch()`."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


def _epoch(train: list[float], val: list[float]) -> list[str]:
    lines = [f"Loss on step {n}: {v}" for n, v in enumerate(train)]
    lines.append(f"Average loss for training batches in this epoch: {sum(train) / len(train)}")
    lines += [f"Loss on step {n}: {v}" for n, v in enumerate(val)]
    return lines + [f"Average loss for validation batches in this epoch: {sum(val) / len(val)}"]


def _series(frame, metric: str) -> dict[int, float]:
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_training_batches_are_the_loss_and_the_validation_average_the_eval_loss(tmp_path: Path):
    (tmp_path / "train.log").write_text("\n".join(_epoch([4.0, 3.0], [3.5, 3.7]) + _epoch([2.5, 2.0], [3.0, 3.2])) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert _series(frame, "loss") == {0: 4.0, 1: 3.0, 2: 2.5, 3: 2.0}
    assert _series(frame, "eval_loss") == {1: 3.6, 3: 3.1}


def test_without_a_validation_average_each_training_average_ends_the_epoch(tmp_path: Path):
    lines = ["Loss on step 0: 4.0", "Loss on step 1: 3.0", "Average loss for training batches in this epoch: 3.5",
             "Loss on step 0: 2.5", "Loss on step 1: 2.0", "Average loss for training batches in this epoch: 2.25"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    assert _series(stdout.read(tmp_path / "train.log").frame, "loss") == {0: 4.0, 1: 3.0, 2: 2.5, 3: 2.0}


def test_one_batch_and_its_epoch_average_are_found_as_a_training_log():
    assert log_hinted("\n".join(_epoch([961.1], [2874.5])).encode())
    assert not log_hinted(b"Loss on step 0: 961.1\nLoss on step 1: 950.2\n")


def test_batch_lines_without_the_epochs_average_are_not_read(tmp_path: Path):
    (tmp_path / "notes.log").write_text("Loss on step 0: 4.0\nLoss on step 1: 3.0\nLoss on step 2: 2.0\n")
    assert stdout.read(tmp_path / "notes.log").frame.empty


def test_the_real_notebook_is_read_with_its_one_training_step():
    a = forensics.analyze(CORPUS / "2b3o4o_transformer-implementation")
    assert dict(a.timeline.series("loss")) == {0: 961.1148071289062}
    assert dict(a.timeline.series("eval_loss")) == {0: 2874.47607421875}
    assert a.status == "warning"
