"""A short hand-written log printed by one notebook cell (forensics/ingest/stdout.py, one_cell): two lines a cell's own
loop printed are its log, where a text file needs three such lines (one or two there are prose).

Corpus cases: AugustinCombes_icu_MLM (one epoch, `Epoch 1: train: loss 3.86; ...` then `Epoch 1: valid: loss 3.12;
...`); 6ma6X_nn4nlp-code (`iter 0: train loss/word=...` and `iter 0: dev loss/word=...`, then the cell died)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import stdout


CORPUS = Path(__file__).parent / "realworld"

_LOOP = ("for epoch in range(epochs):\n"
         "    for batch in train_dl:\n"
         "        loss = criterion(model(batch['tokens']), batch['targets'])\n"
         "        loss.backward()\n"
         "        optimizer.step()\n"
         "    print(f'Epoch {1+epoch}:', 'train: loss {:.2f}; accuracy {:.2f}'.format(epoch_loss, epoch_acc))\n")
_ONE_EPOCH = ("Epoch 1: train: loss 3.86; accuracy 0.29\n", "Epoch 1: valid: loss 3.12; accuracy 0.41\n")


def _cell(count: int, source: str, *texts: str) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text} for text in texts]}


def _notebook(folder: Path, *cells: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                    "cells": [_cell(1, "import torch"), *cells]}))
    return folder


def _series(result, metric: str) -> dict:
    return {int(r.step): r.value for r in result.timeline.frame.itertuples() if r.metric == metric}


def test_one_cells_train_and_held_out_lines_of_one_epoch_are_its_log(tmp_path):
    result = forensics.analyze(_notebook(tmp_path / "run", _cell(2, _LOOP, *_ONE_EPOCH)))
    assert list(_series(result, "loss").values()) == [3.86]
    assert list(_series(result, "eval_loss").values()) == [3.12]
    assert result.status == "warning"  # one epoch mean and one held-out value: no course to judge


def test_the_corpus_cell_that_died_after_its_first_pass_is_read():
    """6ma6X_nn4nlp-code: the n-gram LM's first pass of five, then a KeyError in its sample printing."""
    result = forensics.analyze(CORPUS / "6ma6X_nn4nlp-code")
    assert _series(result, "loss") == {0: 6.2583} and _series(result, "eval_loss") == {0: 5.8742}
    assert result.status == "warning"


def test_the_same_two_lines_in_a_text_file_are_still_prose(tmp_path):
    (tmp_path / "notes.txt").write_text("".join(_ONE_EPOCH))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_one_such_line_in_a_cell_is_still_no_log(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_notebook(tmp_path / "run", _cell(2, "print(summary)", _ONE_EPOCH[0])))


def test_two_lines_from_two_cells_are_still_no_log(tmp_path):
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_notebook(tmp_path / "run", _cell(2, "print(a)", _ONE_EPOCH[0]),
                                    _cell(3, "print(b)", _ONE_EPOCH[1])))


_KERAS_TRIMMED = ("1693/1694 [============================>.] - ETA: 0s - loss: 2.4737 - accuracy: 0.4442\n"
                  "1694/1694 [==============================] - 63s 37ms/step - loss: 2.4737 - accuracy: 0.4442\n"
                  "Epoch 49/50\n"
                  "1694/1694 [==============================] - 63s 37ms/step - loss: 2.4373 - accuracy: 0.4498\n"
                  "Epoch 50/50\n"
                  "1694/1694 [==============================] - 63s 37ms/step - loss: 2.3995 - accuracy: 0.4560\n")


def test_two_bar_lines_before_a_trimmed_keras_logs_first_epoch_stay_out_of_one_cells_log(tmp_path):
    """Arnab1181412_Text-Generation-...: the owner kept the fit's last epochs; its two bar lines before `Epoch 49/50`
    are no hand-written loop's steps 1693 and 1694 (they made the gpt-2-simple cell after it a new training)."""
    frame = stdout.read_console(_KERAS_TRIMMED, tmp_path / "train.ipynb", [], one_cell=True).frame
    assert sorted(set(frame["step"])) == [49, 50]


def test_the_healthy_notebook_whose_keras_cell_opens_on_bar_lines_stays_healthy():
    result = forensics.analyze(CORPUS / "Arnab1181412_Text-Generation-using-Attention-Mechanism-and-GPT-2")
    assert result.status == "healthy" and result.first_incident is None


def test_a_longer_cell_log_reads_as_before_and_stays_healthy(tmp_path):
    lines = [f"Epoch {e}: train: loss {4.0 - 0.3 * e:.2f}; accuracy 0.3\nEpoch {e}: valid: loss {4.1 - 0.3 * e:.2f}; "
             "accuracy 0.3\n" for e in range(1, 9)]
    text = "".join(lines)
    one_cell = stdout.read_console(text, tmp_path / "train.ipynb", [], one_cell=True).frame
    assert one_cell.equals(stdout.read_console(text, tmp_path / "train.ipynb", []).frame)
    result = forensics.analyze(_notebook(tmp_path / "run", _cell(2, _LOOP, text)))
    assert result.status == "healthy", [f.message for f in result.findings]
