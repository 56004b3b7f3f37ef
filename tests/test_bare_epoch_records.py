"""A hand-written loop's record printed as bare lines under a counter line (`epoch 0` / `time 395.9` / `loss 1.788`,
as 14renus_cse291's notebook prints it; `### ITER 50 ###` / `Train Loss: 2.6893`, AIdventures_flora's): read where
the shape repeats, not from a lone `loss 0.5`."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest.console_lines.bare_epochs import has_bare_epoch_records
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"


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


# A counter header on a line of its own, decorated, then `name: value` lines (AIdventures_flora's phi-2 QLoRA loop:
# `### ITER 50 ###` then `Train Loss: 2.6893`, every 50 iterations)
def _iter_records(losses: list[float], every: int = 50) -> str:
    return "".join(f"### ITER {i * every} ###\nTrain Loss: {loss}\n" for i, loss in enumerate(losses))


def test_decorated_iteration_headers_date_the_loss_lines_under_them(tmp_path):
    losses = [2.78, 2.69, 3.12, 2.18, 2.09, 1.02, 1.03, 0.94, 1.18, 0.82, 1.05, 0.97]
    (tmp_path / "train.log").write_text("Model loaded: microsoft/phi-2\n" + _iter_records(losses) + "Model saved\n")
    frame = forensics.load_timeline(tmp_path).frame
    loss = frame[frame["metric"] == "loss"].sort_values("step")
    assert list(loss["value"]) == losses
    assert list(loss["step"]) == [50 * i for i in range(len(losses))]  # the iteration as printed


def test_the_run_finder_finds_a_console_of_decorated_records(tmp_path):
    (tmp_path / "console_capture.txt").write_text(_iter_records([2.5, 2.1, 1.8, 1.6, 1.5, 1.45]))
    a = forensics.analyze(tmp_path)
    assert a.status == "healthy"
    assert log_hinted(_iter_records([2.5, 2.1, 1.8]).encode())


@pytest.mark.parametrize("header", ["===== Epoch {n} =====", "--- epoch {n} ---", "*** Epoch {n}/6 ***"])
def test_decorated_epoch_headers_give_one_point_an_epoch_with_its_held_out_loss(tmp_path, header):
    train, val = [2.4, 2.0, 1.8, 1.7, 1.65, 1.6], [2.5, 2.2, 2.0, 1.95, 1.9, 1.88]
    text = "".join(header.format(n=e + 1) + f"\nTrain Loss: {t}\nVal Loss: {v}\n" for e, (t, v) in enumerate(zip(train, val)))
    (tmp_path / "train.log").write_text(text)
    frame = forensics.load_timeline(tmp_path).frame
    loss = frame[frame["metric"] == "loss"].sort_values("step")
    eval_loss = frame[frame["metric"] == "eval_loss"].sort_values("step")
    assert list(loss["value"]) == train and list(eval_loss["value"]) == val
    assert list(loss["step"]) == list(range(1, 7))


def test_step_headers_with_bare_pairs_are_records():
    assert has_bare_epoch_records("".join(f"--- step {s} ---\nloss {2 - s / 1000}\nlr 1e-4\n" for s in (100, 200, 300)))


def test_decorated_lines_that_are_no_counter_are_not_records(tmp_path):
    # a prompt's `### Label: 1` sections (AIdventures_flora prints them after training) and two records alone
    labels = "".join(f"### Label: {n}\nTrain Loss: 1.0\n" for n in range(5))
    assert not has_bare_epoch_records(labels)
    assert not has_bare_epoch_records(_iter_records([1.2, 1.1]))
    assert not log_hinted(labels.encode())


def test_epoch_headers_over_several_pair_lines_stay_the_stepless_readers(tmp_path):
    # `=== Epoch E/N ===` over `Loss: X, BLEU: Y` lines (YYYYXL1004_NLP2): not records of one pair a line
    text = "".join(f"=== Epoch {e}/5 ===\nLoss: {3 - e / 2}, BLEU: {e / 10}\n" for e in range(1, 6))
    assert not has_bare_epoch_records(text)
    (tmp_path / "train.log").write_text(text)
    frame = forensics.load_timeline(tmp_path).frame
    assert list(frame[frame["metric"] == "loss"].sort_values("step")["value"]) == [2.5, 2.0, 1.5, 1.0, 0.5]


def test_the_corpus_loop_of_two_line_records_is_read_healthy():
    a = forensics.analyze(CORPUS / "AIdventures_flora")
    frame = forensics.load_timeline(CORPUS / "AIdventures_flora").frame
    assert len(frame[frame["metric"] == "loss"]) == 800
    assert (a.status, a.first_incident) == ("healthy", None)
