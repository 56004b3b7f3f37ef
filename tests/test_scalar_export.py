"""TensorBoard's `Wall time,Step,Value` scalar exports, one tag a file (forensics/ingest/scalar_export.py).

From corpus batch AS70 (ofrik_Seq2Seq)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from forensics.ingest import scalar_export
from forensics.discover.run import discover


# --- TensorBoard's scalar export ------------------------------------------------------------------------------------

def _export(path: Path, steps, values, timed: bool = True) -> None:
    """TensorBoard's download (`timed`), or a script's own `step,value` file of the same series."""
    rows = "".join((f"{1.5e9 + s}," if timed else "") + f"{s},{v}\n" for s, v in zip(steps, values))
    path.write_text(("Wall time,Step,Value\n" if timed else "step,value\n") + rows)


def test_a_scalar_export_is_read_under_the_tag_its_file_name_gives(tmp_path):
    _export(tmp_path / "train_loss.csv", [18, 42, 66], [10.9, 10.7, 10.5])
    _export(tmp_path / "validation_bleu.csv", [0, 50], [0.0002, 0.0])
    _export(tmp_path / "run-train-tag-loss.csv", [1, 2], [3.0, 2.9])
    assert sorted(p.name for p in discover(tmp_path).csv_logs) == ["run-train-tag-loss.csv", "train_loss.csv",
                                                                   "validation_bleu.csv"]
    frame = scalar_export.read(tmp_path / "train_loss.csv").frame
    assert frame["metric"].unique().tolist() == ["loss"] and frame["step"].tolist() == [18, 42, 66]
    assert frame["wall_time"].tolist() == pytest.approx([1.5e9 + 18, 1.5e9 + 42, 1.5e9 + 66])
    assert scalar_export.read(tmp_path / "validation_bleu.csv").frame["metric"].unique().tolist() == ["eval_bleu"]
    assert scalar_export.read(tmp_path / "run-train-tag-loss.csv").frame["metric"].unique().tolist() == ["loss"]


def test_a_nan_value_in_a_scalar_export_is_kept_and_a_cut_row_left_out(tmp_path):
    (tmp_path / "loss.csv").write_text("Wall time,Step,Value\n1.0,1,2.5\n2.0,2,nan\n3.0,3")
    rec = scalar_export.read(tmp_path / "loss.csv")
    assert rec.frame["step"].tolist() == [1, 2] and math.isnan(rec.frame["value"].iloc[1])
    assert rec.warnings


def test_a_byte_that_is_not_utf8_costs_its_row_only_and_is_said(tmp_path):
    # a damaged byte inside one value: the other rows are read and the replacement said, as in every text reader
    (tmp_path / "loss.csv").write_bytes(b"Wall time,Step,Value\n1.0,1,2.5\n2.0,2,2.\xff4\n3.0,3,2.3\n")
    rec = scalar_export.read(tmp_path / "loss.csv")
    assert rec.frame["step"].tolist() == [1, 3] and rec.frame["value"].tolist() == [2.5, 2.3]
    assert any("not UTF-8" in w for w in rec.warnings)


def test_a_utf8_scalar_export_has_no_warning(tmp_path):
    _export(tmp_path / "loss.csv", [1, 2, 3], [2.5, 2.4, 2.3])
    assert scalar_export.read(tmp_path / "loss.csv").warnings == ()


# --- a script's own `step,value` file, one metric a file, named by the file (AS116: MABELGAO_Adaptive-SimPO) --------

def test_a_step_value_file_named_for_a_loss_is_read_with_its_sibling_metrics(tmp_path):
    _export(tmp_path / "train_loss.csv", [5, 10, 15], [1.49, 1.50, 1.68], timed=False)
    _export(tmp_path / "eval_loss.csv", [50, 100], [1.575, 1.574], timed=False)
    _export(tmp_path / "eval_acc.csv", [50, 100], [0.564, 0.566], timed=False)
    assert sorted(p.name for p in discover(tmp_path).csv_logs) == ["eval_acc.csv", "eval_loss.csv", "train_loss.csv"]
    frame = scalar_export.read(tmp_path / "train_loss.csv").frame
    assert frame["metric"].unique().tolist() == ["loss"] and frame["step"].tolist() == [5, 10, 15]
    assert frame["value"].tolist() == [1.49, 1.50, 1.68] and frame["wall_time"].isna().all()
    assert scalar_export.read(tmp_path / "eval_loss.csv").frame["metric"].unique().tolist() == ["eval_loss"]
    assert scalar_export.read(tmp_path / "eval_acc.csv").frame["metric"].unique().tolist() == ["eval_acc"]


def test_a_step_value_table_where_no_file_names_a_loss_is_not_a_training_log(tmp_path):
    # a data table in the same two columns (a schedule, a price series): nothing in the folder names a loss
    _export(tmp_path / "prices.csv", [1, 2, 3], [10.0, 10.5, 9.8], timed=False)
    _export(tmp_path / "warmup_schedule.csv", [0, 100], [0.0, 1.0], timed=False)
    assert discover(tmp_path).csv_logs == []


def test_the_corpus_cases_step_value_files_are_its_only_logs():
    case = Path(__file__).parent / "realworld" / "MABELGAO_Adaptive-SimPO-with-Low-Rank-Adaptation"
    assert sorted(p.name for p in discover(case).csv_logs) == ["eval_acc.csv", "eval_loss.csv", "eval_margin.csv",
                                                               "train_acc.csv", "train_loss.csv", "train_margin.csv"]
    assert scalar_export.read(case / "results" / "train_loss.csv").frame["step"].tolist()[:3] == [5, 10, 15]
