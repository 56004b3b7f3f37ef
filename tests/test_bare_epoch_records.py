"""A hand-written loop's per-epoch record printed as bare lines (`epoch 0` / `time 395.9` / `loss 1.788`, as
14renus_cse291's notebook prints it): read where the shape repeats, not from a lone `loss 0.5`."""
from __future__ import annotations

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest.console_lines.bare_epochs import has_bare_epoch_records


def _records(losses: list[float]) -> str:
    return "".join(f"epoch {e}\ntime {390.5 + e}\nloss {loss}\n" for e, loss in enumerate(losses))


def test_bare_epoch_records_are_read_one_point_an_epoch(tmp_path):
    losses = [1.79, 1.85, 1.73, 1.48, 0.92, 0.55, 0.43, 0.39, 0.37]
    (tmp_path / "train.log").write_text("CUDA is supported\ndone\n" + _records(losses))
    a = forensics.analyze(tmp_path)
    frame = forensics.load_timeline(tmp_path).frame
    loss = frame[frame["metric"] == "loss"].sort_values("step")
    assert list(loss["value"]) == losses
    assert list(loss["step"]) == list(range(1, 10))  # a loop that counts epochs from 0: epoch 0 at step 1
    assert (a.status, a.first_incident) == ("healthy", None)


def test_two_bare_records_are_no_shape_to_read(tmp_path):
    (tmp_path / "train.log").write_text("setting up\n" + _records([1.2, 1.1]) + "saved\n")
    assert not has_bare_epoch_records(_records([1.2, 1.1]))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_bare_pairs_without_an_epoch_line_are_not_records():
    assert not has_bare_epoch_records("loss 1.2\nloss 1.1\nloss 1.0\nloss 0.9\n")
    assert not has_bare_epoch_records("".join(f"epoch {e}\ntime {e}.5\n" for e in range(5)))  # no loss
