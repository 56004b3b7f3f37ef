"""Tests of the results-table reader (ingest/results_table.py): epochs counted from 0 or 1.

From review day 9, judge second pass (batches AQ4 and AQ5): each test fails on the code before its change; each
change also has a test where its rule must not fire. Folder names avoid the words the profile reads in names."""
from __future__ import annotations

import json

import forensics
from forensics.ingest.results_table import trainer_tables


# ---- change 4: a notebook's per-epoch table whose rows count from 0 is dated at the ends of the epochs ---------------


def _epoch_table_html(labels: list[int], bar: str) -> str:
    """transformers' NotebookProgressCallback table with eval_strategy 'epoch': `int(state.epoch)` in the first
    column, the training and validation losses beside it, the progress bar over it."""
    train = [2.0016, 1.4298, 1.2293, 1.0703, 0.9171]
    valid = [1.534434, 1.494818, 1.501496, 1.545876, 1.620981]
    rows = "".join(f"    <tr>\n      <td>{e}</td>\n      <td>{t:.6f}</td>\n      <td>{v:.6f}</td>\n    </tr>\n"
                   for e, t, v in zip(labels, train, valid))
    return (f"\n    <div>\n      \n      <progress value='1410' max='1410' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      {bar}\n    </div>\n"
            "    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
            "      <th>Epoch</th>\n      <th>Training Loss</th>\n      <th>Validation Loss</th>\n    </tr>\n"
            "  </thead>\n  <tbody>\n" + rows + "  </tbody>\n</table><p>")


def test_epoch_table_counted_from_zero_dates_each_row_at_the_end_of_its_epoch():
    lines = trainer_tables(_epoch_table_html([0, 1, 2, 3, 4], "[1410/1410 3:10:09, Epoch 4/5]")).splitlines()
    assert [line.split("\t")[:2] for line in lines[2:]] == [["282", "1"], ["564", "2"], ["846", "3"],
                                                            ["1128", "4"], ["1410", "5"]]


def test_epoch_table_counted_from_one_keeps_its_labels():
    lines = trainer_tables(_epoch_table_html([1, 2, 3, 4, 5], "[1410/1410 3:10:09, Epoch 5/5]")).splitlines()
    assert [line.split("\t")[:2] for line in lines[2:]] == [["282", "1"], ["564", "2"], ["846", "3"],
                                                            ["1128", "4"], ["1410", "5"]]


def test_overfitting_in_an_epoch_table_counted_from_zero_is_dated_at_the_first_rise(tmp_path):
    cell = {"cell_type": "code", "execution_count": 9, "metadata": {}, "source": "trainer.train()", "outputs": [
        {"output_type": "display_data", "metadata": {}, "data": {
            "text/plain": "<IPython.core.display.HTML object>",
            "text/html": _epoch_table_html([0, 1, 2, 3, 4], "[1410/1410 3:10:09, Epoch 4/5]")}}]}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "train.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                              "nbformat_minor": 5}))
    analysis = forensics.analyze(tmp_path / "run")
    assert analysis.timeline.series("eval_loss").index.tolist() == [282, 564, 846, 1128, 1410]
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("overfitting", 846)
