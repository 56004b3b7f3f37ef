"""Metric tables read from CSV (forensics/ingest/csv_metrics.py) and what they say of the run: an own logger's sparse
rows (one row a metric group) with its parameter count, a hand-written header with spaces, launches appended to one
CSV, a Keras CSVLogger table with the script's model_metadata.json.

From batch AS64 (tests/realworld/PROVENANCE.md). Tables are written here."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import forensics
from forensics.ingest import csv_metrics
from forensics.table_headers import is_metrics_table_header


def _sparse_logger_table(steps: int = 40, parameters: int | None = 22_696_448) -> str:
    """AndyZhao2023's logger: at each logging step one row per metric group (rate, train, timing, system), an eval
    row every 200 steps, the model's size in a row of its own at step 0."""
    header = ["model/total_parameters", "step", "learning_rate/group_0", "train/loss", "train/grad_norm",
              "timing/total_ms", "system/elapsed_time_hours", "eval/loss"]
    rows = [[parameters, 0, "", "", "", "", "", ""]] if parameters else []
    for i in range(steps):
        step = 50 * i
        loss = 1.0 + 8.3 * math.exp(-step / 60)
        rows += [["", step, 3e-4, "", "", "", "", ""], ["", step, "", f"{loss:.4f}", 0.5, "", "", ""],
                 ["", step, "", "", "", 300.0, "", ""], ["", step, "", "", "", "", step / 1300, ""]]
        if step and step % 200 == 0:
            rows.append(["", step, "", "", "", "", "", f"{loss + 0.05:.4f}"])
    return "\n".join(",".join(str(c) for c in row) for row in [header] + rows) + "\n"


def _series(frame: pd.DataFrame, metric: str) -> dict:
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def test_a_loggers_sparse_rows_one_loss_row_a_step_are_a_training_log(tmp_path):
    (tmp_path / "metrics.csv").write_text(_sparse_logger_table())
    frame = csv_metrics.read(tmp_path / "metrics.csv").frame
    assert len(_series(frame, "loss")) == 40 and len(_series(frame, "eval_loss")) == 9
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_per_example_table_many_loss_rows_a_step_is_still_refused(tmp_path):
    (tmp_path / "scores.csv").write_text("epoch,guid,loss\n" + "".join(
        f"{e},{g},{0.5 + g / 100:.3f}\n" for e in range(3) for g in range(20)))
    with pytest.raises(forensics.errors.UnreadableFile, match="per-example"):
        csv_metrics.read(tmp_path / "scores.csv")


def test_a_total_parameters_column_is_the_model_size(tmp_path):
    (tmp_path / "metrics.csv").write_text(_sparse_logger_table())
    assert forensics.analyze(tmp_path).run_profile.model_params == 22_696_448


def test_a_table_without_a_size_column_says_no_size(tmp_path):
    (tmp_path / "metrics.csv").write_text(_sparse_logger_table(parameters=None))
    assert forensics.analyze(tmp_path).run_profile.model_params is None


def test_a_header_with_spaces_names_the_train_and_validation_loss(tmp_path):
    assert is_metrics_table_header(["Epoch", "Train Loss", "Validation Loss"])
    assert not is_metrics_table_header(["Epoch", "Train Accuracy"])
    (tmp_path / "train_log.csv").write_text("Epoch,Train Loss,Validation Loss\n" + "".join(
        f"{e},{2.0 / (e + 1):.4f},{2.1 / (e + 1) + 0.05:.4f}\n" for e in range(10)))
    frame = csv_metrics.read(tmp_path / "train_log.csv").frame
    assert sorted(set(frame["metric"])) == ["epoch", "eval_loss", "loss"]


def _launch(epochs: int, start: float, end: float) -> list[tuple[int, float, float]]:
    return [(e, start + (end - start) * e / (epochs - 1), start + 0.1 + (end - start) * e / (epochs - 1))
            for e in range(epochs)]


def test_launches_appended_to_one_csv_are_attempts_the_last_one_judged(tmp_path):
    """A first launch abandoned at 5.0 -> 4.0, then a launch from epoch 0 again that learns 3.0 -> 1.0: the final
    history is the last launch alone, the first one's rows kept as abandoned."""
    rows = _launch(8, 5.0, 4.0) + _launch(20, 3.0, 1.0)
    (tmp_path / "train_log.csv").write_text("epoch,train_loss,val_loss\n" + "".join(
        f"{e},{t:.4f},{v:.4f}\n" for e, t, v in rows))
    timeline = forensics.analyze(tmp_path).timeline
    loss = timeline.series("loss")
    assert len(loss) == 20 and loss.iloc[0] == pytest.approx(3.0) and loss.iloc[-1] == pytest.approx(1.0)
    assert timeline.frame["abandoned"].any()


def test_a_table_whose_step_only_grows_is_one_attempt(tmp_path):
    rows = _launch(20, 3.0, 1.0)
    (tmp_path / "train_log.csv").write_text("epoch,train_loss,val_loss\n" + "".join(
        f"{e},{t:.4f},{v:.4f}\n" for e, t, v in rows))
    timeline = forensics.analyze(tmp_path).timeline
    assert len(timeline.series("loss")) == 20 and not timeline.frame["abandoned"].any()


_KERAS_ROWS = "".join(f"{e},{0.75 + e / 200:.4f},0.005,{1.9 / (e + 1) ** 0.5:.4f},{0.79 + e / 300:.4f},"
                      f"{1.4 / (e + 1) ** 0.2:.4f}\n" for e in range(30))


def test_a_keras_csv_logger_table_and_its_model_metadata(tmp_path):
    (tmp_path / "training_log.csv").write_text("epoch,accuracy,learning_rate,loss,val_accuracy,val_loss\n" + _KERAS_ROWS)
    (tmp_path / "model_metadata.json").write_text(json.dumps({"lstm_units": 128, "total_params": 4528088}))
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.framework, profile.model_params) == ("keras", 4528088)


def test_a_bare_epoch_loss_table_names_no_framework(tmp_path):
    (tmp_path / "training_log.csv").write_text("epoch,loss,val_loss\n" + "".join(
        f"{e},{1.9 / (e + 1) ** 0.5:.4f},{1.4 / (e + 1) ** 0.2:.4f}\n" for e in range(30)))
    assert forensics.analyze(tmp_path).run_profile.framework == "unknown"
