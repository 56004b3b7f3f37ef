"""Long ("tidy") metric tables: one row per metric per step, the metric named in a column of its own
(forensics/ingest/long_table.py, read through csv_metrics; found by discover/csv_header.py).

From corpus batch AS119 (giganticode_rafael-experiments: an MLflow-style `Name,Value,Timestamp,Step` export)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.discover.run import discover
from forensics.errors import NotARunDirectory, UnreadableFile
from forensics.ingest import csv_metrics
from forensics.table_headers import long_table_columns

CASE = Path(__file__).parent / "realworld" / "giganticode_rafael-experiments"


def _long(path: Path, header: str, rows: list[tuple]) -> Path:
    path.write_text(header + "\n" + "".join(",".join(str(c) for c in row) + "\n" for row in rows))
    return path


def _epochs(n: int) -> list[tuple]:
    """An MLflow-style export: train_loss, valid_loss and accuracy a row each at every epoch, ms timestamps."""
    rows = []
    for epoch in range(n):
        stamp = 1592956012879 + 290_000 * epoch
        rows += [('"train_loss"', 5.0 - 0.2 * epoch, stamp, epoch), ('"valid_loss"', 5.5 - 0.1 * epoch, stamp, epoch),
                 ('"accuracy"', 0.2 + 0.01 * epoch, stamp, epoch)]
    return rows


def test_the_header_roles_of_real_exporters_are_recognised():
    assert long_table_columns(["Name", "Value", "Timestamp", "Step"]) == {"name": 0, "value": 1, "time": 2, "step": 3}
    assert long_table_columns(["key", "value", "timestamp", "step"]) is not None  # MLflow's metric history
    assert long_table_columns(["run", "tag", "step", "value"]) is not None  # TensorBoard's get_scalars()
    assert long_table_columns(["metric", "epoch", "value"]) is not None


def test_a_header_with_another_column_or_a_role_missing_or_twice_is_no_long_table():
    assert long_table_columns(["name", "value"]) is None  # no step: a dataset's text and number
    assert long_table_columns(["name", "value", "step", "label"]) is None  # a column of no role
    assert long_table_columns(["name", "value", "step", "epoch"]) is None  # two step columns
    assert long_table_columns(["step", "value"]) is None  # a one-metric series (scalar_export)


def test_a_long_table_is_pivoted_into_the_timelines_series(tmp_path):
    path = _long(tmp_path / "training_metrics.csv", "Name,Value,Timestamp,Step", _epochs(4))
    assert discover(tmp_path).csv_logs == [path]
    frame = csv_metrics.read(path).frame
    loss = frame[frame["metric"] == "loss"]
    assert loss["step"].tolist() == [0, 1, 2, 3] and loss["value"].tolist() == pytest.approx([5.0, 4.8, 4.6, 4.4])
    assert frame[frame["metric"] == "eval_loss"]["value"].tolist() == pytest.approx([5.5, 5.4, 5.3, 5.2])
    assert loss["wall_time"].iloc[0] == pytest.approx(1592956012.879)  # ms -> s


def test_a_nan_value_is_kept_and_a_row_without_a_step_is_said(tmp_path):
    rows = [("loss", 2.5, 0), ("loss", "nan", 1), ("loss", 2.3, "x")]
    path = _long(tmp_path / "metrics.csv", "metric,value,step", rows)
    rec = csv_metrics.read(path)
    assert rec.frame["step"].tolist() == [0, 1] and math.isnan(rec.frame["value"].iloc[1])
    assert any("1 rows" in w for w in rec.warnings)


def test_an_epoch_column_is_numbered_from_one_as_in_a_wide_table(tmp_path):
    path = _long(tmp_path / "metrics.csv", "metric,epoch,value", [("train_loss", 0, 3.0), ("train_loss", 1, 2.0)])
    frame = csv_metrics.read(path).frame
    assert frame[frame["metric"] == "loss"]["step"].tolist() == [1, 2]


def test_a_long_table_of_several_runs_is_not_read_as_one(tmp_path):
    path = _long(tmp_path / "scalars.csv", "run,tag,step,value", [("a", "loss", 1, 2.0), ("b", "loss", 1, 3.0)])
    with pytest.raises(UnreadableFile):
        csv_metrics.read(path)


def test_a_name_value_step_table_where_no_name_is_a_loss_stays_unread(tmp_path):
    # a dataset or a price table in the same three columns: nothing in it names a loss
    _long(tmp_path / "prices.csv", "name,value,step", [("apple", 1.2, 1), ("pear", 0.8, 1), ("apple", 1.3, 2)])
    _long(tmp_path / "items.csv", "name,value", [("the cat sat", 1), ("a dog", 0)])
    assert discover(tmp_path).csv_logs == []
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_the_loss_named_only_in_the_tail_of_a_big_sorted_table_is_found(tmp_path):
    rows = [("accuracy", 0.5, s) for s in range(3000)] + [("val_loss", 1.0 / (s + 1), s) for s in range(3000)]
    path = _long(tmp_path / "history.csv", "key,value,step", rows)
    assert discover(tmp_path).csv_logs == [path]


def test_the_corpus_case_is_read_as_a_healthy_run():
    analysis = forensics.analyze(CASE)
    assert analysis.status == "healthy" and analysis.first_incident is None
