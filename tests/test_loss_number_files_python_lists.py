"""Tests of loss files of numbers only written as one Python / JSON list (`f.write(str(train_losses))`).

Corpus batch AS112: hyunwoongko's transformer train.py and its forks rewrite `result/train_loss.txt` and
`result/test_loss.txt` every epoch as the whole list so far (`[6.739, 5.912, ...]`; Alice-XiaolinZhu_transformer-
translation, ChaiZhi_transformer, LZHMS_TransformerPractice ...), and a file a loop was still rewriting may end
unclosed (`[5.617, 5.063, ...,`). The same name rules as a number a line hold: the name says loss (and the split);
a list in a file whose name says no loss (bleu.txt, predictions.txt, a README) is not read as one."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import loss_number_files
from forensics.discover.json_hints import SNIFF_BYTES
from forensics.discover.run import discover

CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float = 6.7, end: float = 3.0) -> list[float]:
    return [end + (start - end) * math.exp(-i / (n / 4)) for i in range(n)]


def test_closed_lists_in_train_and_test_loss_files_are_read_as_loss_and_eval_loss_by_epoch(tmp_path):
    (tmp_path / "train_loss.txt").write_text(str(_falling(5)))
    (tmp_path / "test_loss.txt").write_text(str([v + 0.2 for v in _falling(5)]))
    assert sorted(p.name for p in discover(tmp_path).loss_number_files) == ["test_loss.txt", "train_loss.txt"]
    train = loss_number_files.read(tmp_path / "train_loss.txt").frame
    held = loss_number_files.read(tmp_path / "test_loss.txt").frame
    assert train["metric"].unique().tolist() == ["loss"] and train["step"].tolist() == [1, 2, 3, 4, 5]
    assert held["metric"].unique().tolist() == ["eval_loss"] and held["step"].tolist() == [1, 2, 3, 4, 5]
    assert train["value"].iloc[0] == pytest.approx(6.7)


def test_an_unclosed_list_a_loop_was_still_rewriting_is_read_up_to_its_last_number(tmp_path):
    (tmp_path / "valid_loss.txt").write_text("[4.98, 4.87, 4.78, 4.84, 4.91, 4.75, 4.56, 4.75,")
    assert [p.name for p in discover(tmp_path).loss_number_files] == ["valid_loss.txt"]
    frame = loss_number_files.read(tmp_path / "valid_loss.txt").frame
    assert frame["metric"].unique().tolist() == ["eval_loss"] and len(frame) == 8
    assert frame["value"].iloc[-1] == pytest.approx(4.75)


def test_a_list_longer_than_the_sniffed_head_is_found_and_read_whole(tmp_path):
    values = _falling(5000)
    text = str(values)
    assert len(text) > SNIFF_BYTES  # the head that discovery reads ends inside a number
    (tmp_path / "train_loss.txt").write_text(text)
    assert [p.name for p in discover(tmp_path).loss_number_files] == ["train_loss.txt"]
    assert len(loss_number_files.read(tmp_path / "train_loss.txt").frame) == 5000


def test_a_healthy_list_of_losses_stays_healthy_and_silent(tmp_path):
    (tmp_path / "train_loss.txt").write_text(str(_falling(40)))
    (tmp_path / "val_loss.txt").write_text(str([v + 0.3 for v in _falling(40)]))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.findings) == ("healthy", [])


@pytest.mark.parametrize("name", ["bleu.txt", "blue.txt", "accuracy.txt", "predictions.txt", "README.md"])
def test_a_list_of_numbers_in_a_file_whose_name_says_no_loss_is_not_read_as_one(tmp_path, name):
    (tmp_path / name).write_text(str([0.0, 0.29, 9.49, 10.53, 11.73]))
    assert discover(tmp_path).loss_number_files == []
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


@pytest.mark.parametrize("text", [
    "[[1, 6.7], [2, 5.9], [3, 5.5]]",  # rows, not numbers (a JSON file's shape: json_history reads those)
    "[6.7, 5.9, 5.5] epoch 3 done",  # words after the list
    "['6.7', '5.9', '5.5']",  # strings
    "[6.7, 5.9]",  # two numbers say nothing of a curve
])
def test_a_loss_named_file_with_something_else_than_one_list_of_numbers_is_not_read(tmp_path, text):
    (tmp_path / "train_loss.txt").write_text(text)
    assert discover(tmp_path).loss_number_files == []


def test_a_bleu_list_beside_the_loss_lists_is_not_read_as_a_loss():
    a = forensics.analyze(CORPUS / "Alice-XiaolinZhu_transformer-translation")
    assert sorted(p.name for p in a.layout.loss_number_files) == ["test_loss.txt", "train_loss.txt"]
    assert a.timeline.series("loss").tolist()[0] == pytest.approx(6.73911223852687)
    assert (a.status, a.findings) == ("healthy", [])


def test_the_corpus_run_whose_held_out_loss_rises_for_345_epochs_is_told_overfitting():
    a = forensics.analyze(CORPUS / "LZHMS_TransformerPractice")
    assert a.status == "warning" and a.first_incident.kind == "overfitting"
