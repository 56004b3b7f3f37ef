"""A hand-written loop that prints the epoch's SUMMED loss (stopstressingmeout_Next-Word-Prediction-Using-LSTM:
`total_loss = total_loss + loss.item()` over 18 batches, printed undivided): divided by the batch count where the
notebook tells it (`len(dataset)` shown, `batch_size` literal), else marked a sum so that no rule judges its level; and
a fresh model's memorization found over late passes dated where its loss went under 1 nat."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import forensics
from forensics.analyzers.memorization import dated_under_pretraining_floor
from forensics.findings import Finding
from forensics.ingest import notebook, stdout
from forensics.ingest.notebook_code import code_values
from forensics.ingest.notebook_code.summed_loss import summed_loss_cells

CASE = Path(__file__).parent / "realworld" / "stopstressingmeout_Next-Word-Prediction-Using-LSTM"
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


def test_a_fresh_models_late_passes_memorization_is_dated_under_one_nat():
    loss = pd.Series([5.6, 3.0, 1.5, 1.1, 0.9, 0.8, 0.7, 0.6, 0.45, 0.4, 0.3, 0.2, 0.15],
                     index=range(1, 14), dtype="float64")
    found = Finding("memorization", "warning", 12, "m", metric="loss",
                    evidence={"level": 0.2, "late_passes": True, "settled_step": 12})
    assert dated_under_pretraining_floor(found, loss, built_here=True).step == 5  # under 1 nat from 5, under 0.5 from 9
    other = Finding("memorization", "warning", 12, "m", metric="loss", evidence={"level": 0.2, "settled_step": 12})
    assert dated_under_pretraining_floor(other, loss, built_here=True).step == 9


def test_a_start_from_random_weights_read_off_the_loss_alone_keeps_the_pretraining_floor():
    # Miki-Palmisano_BLOOMZ-Solidity_Train: a fine-tune whose profile reads pretrain from its loss level alone
    loss = pd.Series([5.6, 3.0, 1.5, 1.1, 0.9, 0.8, 0.7, 0.6, 0.45, 0.4, 0.3, 0.2, 0.15],
                     index=range(1, 14), dtype="float64")
    found = Finding("memorization", "warning", 12, "m", metric="loss",
                    evidence={"level": 0.2, "late_passes": True, "settled_step": 12})
    assert dated_under_pretraining_floor(found, loss).step == 9


def test_the_case_is_memorization_dated_where_the_per_batch_loss_went_under_one_nat():
    analysis = forensics.analyze(str(CASE))
    assert (analysis.status, analysis.first_incident.kind) == ("warning", "memorization")
    assert math.isclose(analysis.first_incident.step, 20, abs_tol=5)


def _summary(loss: float) -> str:
    return (f"{{'train_runtime': 3.037, 'train_samples_per_second': 1.646, 'train_steps_per_second': 0.988, "
            f"'train_loss': {loss}, 'epoch': 1.0}}\n")


def test_a_closing_summary_is_dated_by_the_finished_bar_printed_after_it(tmp_path):
    # REICHIYAN_llm_ft_tinyllama: `!python train_*.py` cells of 3 steps each, only their summaries logged; the bar
    # before the second is the first run's own finished one, before the third that run's first draw `0% 0/3`
    outputs = ["Map: 100% 5/5 [00:00<00:00, 177.71 examples/s]\n" + _summary(11.1548) + "100% 3/3 [04:13<00:00, 84.50s/it]\n",
               _summary(11.1548) + "100% 3/3 [00:02<00:00,  1.28it/s]\n",
               "  0% 0/3 [00:00<?, ?it/s]`use_cache=True` is incompatible with gradient checkpointing.\n"
               + _summary(13.697) + "100% 3/3 [00:03<00:00,  1.01s/it]\n"]
    path = tmp_path / "console.txt"
    path.write_text("".join(outputs))
    frame = stdout.read_console("".join(outputs), path, []).frame
    assert frame[frame["metric"] == "train_loss"]["step"].tolist() == [3, 3, 3]
