"""Printed pandas DataFrames of a run's history (forensics/ingest/dataframe_table.py): a row an epoch.

From corpus batch AS49: a hand-written loop shows its history as a pandas DataFrame each epoch,
`pd.DataFrame(rows).set_index('epoch')` (sehbeygi79_Medical-QA-RAG): the table is read, a row an epoch. The notebooks
are written in nbformat 4's shape; the DataFrames are rendered by pandas itself.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest.stdout import read_console


def _write(folder: Path, cells: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("import transformers")] + cells), folder / "run.ipynb")
    return folder


def _history(epochs: int, **columns) -> list[dict]:
    return [{"epoch": e, **{name: f(e) for name, f in columns.items()}} for e in range(epochs)]


def _display_cell(frame: pd.DataFrame):
    return new_code_cell("display.display(pd.DataFrame(all_results).set_index('epoch'))", outputs=[new_output(
        "display_data", data={"text/plain": repr(frame), "text/html": frame.to_html()})])


def _falling(e: int) -> float:
    return 0.64 * 0.9 ** e + 0.2


def test_a_dataframe_of_epoch_results_is_read_a_row_an_epoch(tmp_path):
    rows = _history(20, train_loss=_falling, valid_acc=lambda e: 0.8 - 0.13 * 0.8 ** e)
    a = forensics.analyze(_write(tmp_path / "table", [_display_cell(pd.DataFrame(rows).set_index("epoch"))]))
    frame = a.timeline.frame
    losses = frame[frame["metric"] == "loss"]
    assert list(losses["step"]) == list(range(1, 21))  # epoch 0's row is the first epoch's end
    assert list(losses["value"]) == pytest.approx([_falling(e) for e in range(20)], abs=1e-6)
    assert list(frame[frame["metric"] == "eval_accuracy"]["value"])[-1] == pytest.approx(rows[-1]["valid_acc"], abs=1e-6)
    assert a.status == "healthy"


def test_a_dataframe_printed_again_each_epoch_counts_each_row_once(tmp_path):
    """`print(df)` of the growing history after every epoch in a console: the last printing holds every row."""
    rows = _history(6, loss=_falling, val_loss=lambda e: _falling(e) + 0.1)
    log = "".join(f"epoch {k} done\n{pd.DataFrame(rows[:k + 1])}\n" for k in range(len(rows)))
    frame = read_console(log, Path("train.log"), []).frame
    losses = frame[frame["metric"] == "loss"]
    assert list(losses["step"]) == list(range(1, 7))
    assert list(frame[frame["metric"] == "eval_loss"]["value"]) == pytest.approx([r["val_loss"] for r in rows],
                                                                                 abs=1e-6)


def test_a_dataframe_with_no_epoch_or_no_loss_is_not_read():
    """A table of predictions (no loss column) and one whose rows no epoch or step dates are no history."""
    scores = pd.DataFrame({"rouge1": [0.3, 0.2], "rouge2": [0.1, 0.05]})
    undated = pd.DataFrame({"loss": [0.5, 0.4], "accuracy": [0.7, 0.8]})
    frame = read_console(f"{scores}\n\n{undated}\n", Path("eval.log"), []).frame
    assert frame.empty
