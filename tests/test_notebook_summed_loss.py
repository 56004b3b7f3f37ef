"""A hand-written loop that prints the epoch's SUMMED loss (forensics/ingest/notebook_code/summed_loss.py): divided by
the batch count where the notebook tells it (`len(dataset)` shown, `batch_size` literal), else marked a sum so that no
rule judges its level.

Corpus case: stopstressingmeout_Next-Word-Prediction-Using-LSTM (`total_loss = total_loss + loss.item()` over 18
batches, printed undivided)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import forensics
from forensics.ingest import notebook
from forensics.ingest.notebook_code import code_values
from forensics.ingest.notebook_code.summed_loss import summed_loss_cells


LOADER = "loader = DataLoader(dataset, batch_size=32, shuffle=True)\n"
MODEL = ("import torch.nn as nn\n"
         "class LSTMModel(nn.Module):\n"
         "    def __init__(self, vocab_size):\n"
         "        super().__init__()\n"
         "        self.embedding = nn.Embedding(vocab_size, 100)\n"
         "        self.lstm = nn.LSTM(100, 150, batch_first=True)\n"
         "        self.fc = nn.Linear(150, vocab_size)\n"
         "model = LSTMModel(284)\n")
SUMMED = ("import torch\n"
          "for epoch in range(epochs):\n"
          "    total_loss = 0\n"
          "    for batch_x, batch_y in loader:\n"
          "        optimizer.zero_grad()\n"
          "        loss = criterion(model(batch_x), batch_y)\n"
          "        loss.backward()\n"
          "        optimizer.step()\n"
          "        total_loss = total_loss + loss.item()\n"
          "    print(f'Epoch: {epoch + 1}, Loss: {total_loss:.4f}')\n")
MEAN = SUMMED.replace("{total_loss:.4f}", "{total_loss / len(loader):.4f}")
# 18 batches an epoch, 50 epochs: the case's course, a fresh head's 5.6 nats a batch summed (101.03) down to 2.59
SUMS = [round(101.0324 * (2.5933 / 101.0324) ** (i / 49), 4) for i in range(50)]


def _cell(source: str, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "source": source, "execution_count": 1, "outputs": outputs or []}


def _cells(loop: str, dataset_shown: bool = True) -> list[dict]:
    text = "".join(f"Epoch: {i}, Loss: {v:.4f}\n" for i, v in enumerate(SUMS, 1))
    shown = [_cell("len(dataset)", [{"output_type": "execute_result", "execution_count": 1,
                                     "data": {"text/plain": "555"}, "metadata": {}}])] if dataset_shown else []
    return shown + [_cell(MODEL), _cell(LOADER), _cell(loop, [{"output_type": "stream", "name": "stdout", "text": text}])]


def _notebook(tmp_path, cells: list[dict]) -> Path:
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_an_epoch_sum_printed_undivided_is_read_per_batch(tmp_path):
    records = notebook.read(_notebook(tmp_path, _cells(SUMMED)))
    loss = records.frame[records.frame["metric"] == "loss"]["value"].tolist()
    assert loss == pytest.approx([v / 18 for v in SUMS], rel=1e-5)  # ceil(555 / 32) = 18 batches


def test_a_loop_that_prints_the_epoch_mean_is_not_a_sum():
    assert summed_loss_cells(_cells(MEAN)) == {}


def test_a_sum_divided_in_place_before_its_print_is_not_a_sum():
    in_place = SUMMED.replace("    print(", "    total_loss /= len(loader)\n    print(")
    assert summed_loss_cells(_cells(in_place)) == {}


def test_len_of_the_loader_shown_gives_the_batch_count():
    cells = [_cell("len(loader)", [{"output_type": "execute_result", "data": {"text/plain": "18"}}]),
             _cell(SUMMED)]
    assert [s.batches for s in summed_loss_cells(cells).values()] == [18]


def test_a_sum_over_an_untold_batch_count_is_marked_a_sum():
    assert code_values(_cells(SUMMED, dataset_shown=False), "").get("loss.epoch_sum_unscaled") is True
    assert "loss.epoch_sum_unscaled" not in code_values(_cells(SUMMED), "")
    assert "loss.epoch_sum_unscaled" not in code_values(_cells(MEAN, dataset_shown=False), "")


def test_a_sum_over_an_untold_batch_count_is_not_judged_on_its_level(tmp_path):
    _notebook(tmp_path, _cells(SUMMED, dataset_shown=False))
    kinds = {f.kind for f in forensics.analyze(str(tmp_path)).findings}
    assert not kinds & {"start_above_uniform_guess", "impossible_loss", "memorization"}


def test_a_mean_printed_at_the_same_numbers_is_still_judged_on_its_level(tmp_path):
    _notebook(tmp_path, _cells(MEAN, dataset_shown=False))
    assert any(f.kind == "start_above_uniform_guess" for f in forensics.analyze(str(tmp_path)).findings)
