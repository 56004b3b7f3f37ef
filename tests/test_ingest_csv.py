"""CSV metric tables: Lightning's CSVLogger `metrics.csv` (what LitGPT writes by default), written here by the real
logger, and a script's own table with an epoch column; tables that are not training metrics are left alone."""
from __future__ import annotations

import math

import pytest

import forensics
from forensics.errors import UnreadableFile
from forensics.ingest import csv_metrics
from forensics.discover.run import discover


def _series(frame, metric):
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def test_lightnings_csv_logger_table_is_read_train_and_validation_rows_apart(tmp_path):
    loggers = pytest.importorskip("lightning.fabric.loggers")
    logger = loggers.CSVLogger(str(tmp_path), name="csv")
    for it in range(1, 61):  # LitGPT's fine-tuning metrics, logged at step=iter_num
        logger.log_metrics({"loss": 3 * math.exp(-it / 20) + 0.4, "iter": it, "epoch": 0, "learning_rate": 1e-4},
                           step=it)
        if it % 20 == 0:
            logger.log_metrics({"val_loss": 3 * math.exp(-it / 20) + 0.5, "val_ppl": 10.0}, step=it)
    logger.finalize("success")
    (table,) = discover(tmp_path).csv_logs
    assert table.name == "metrics.csv"
    frame = csv_metrics.read(table).frame
    assert len(_series(frame, "loss")) == 60 and _series(frame, "loss")[1] == pytest.approx(3 * math.exp(-1 / 20) + 0.4)
    assert sorted(_series(frame, "eval_loss")) == [20, 40, 60]
    assert _series(frame, "learning_rate")[30] == 1e-4
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_scripts_table_with_one_row_an_epoch_and_lightnings_epoch_means(tmp_path):
    (tmp_path / "history.csv").write_text("epoch,train_loss,val_loss\n" + "".join(
        f"{e},{2.0 / (e + 1):.4f},{1.0 + abs(e - 5) / 10:.4f}\n" for e in range(12)))
    frame = csv_metrics.read(tmp_path / "history.csv").frame
    assert sorted(_series(frame, "loss")) == list(range(1, 13)) and _series(frame, "epoch")[12] == 12
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind) == ("warning", "overfitting")
    (tmp_path / "history.csv").unlink()
    (tmp_path / "metrics.csv").write_text("epoch,step,train_loss_step,train_loss_epoch,lr-AdamW\n"
                                          "0,1,2.5,,0.001\n0,2,2.4,,0.001\n0,2,,2.45,\n1,3,2.3")
    records = csv_metrics.read(tmp_path / "metrics.csv")
    assert _series(records.frame, "loss") == {1: 2.5, 2: 2.4}  # the epoch mean left out, the cut last row dropped
    assert _series(records.frame, "learning_rate") == {1: 0.001, 2: 0.001}
    assert records.warnings and "cut" in records.warnings[0]


def test_a_csv_that_is_not_a_metrics_table_is_not_a_log(tmp_path):
    (tmp_path / "data.csv").write_text("id,text,label\n1,hello,0\n2,world,1\n")
    (tmp_path / "train.log").write_text("".join(f"step {s} | loss {2 - s / 100:.3f}\n" for s in range(1, 40)))
    assert discover(tmp_path).csv_logs == []
    with pytest.raises(UnreadableFile):
        csv_metrics.read(tmp_path / "data.csv")


def test_a_per_example_loss_table_is_not_a_training_log(tmp_path):
    """A training-dynamics dump (`epoch,guid,loss`, one row per example per epoch) beside a run is not its log."""
    (tmp_path / "training_dynamics.csv").write_text("epoch,guid,loss\n" + "".join(
        f"{e},{g},{2.0 / (e + 1) + g / 1000:.4f}\n" for e in range(3) for g in range(200)))
    with pytest.raises(UnreadableFile, match="per-example"):
        csv_metrics.read(tmp_path / "training_dynamics.csv")


def test_an_exported_log_history_keeps_the_closing_average_apart_and_reads_fractional_epochs(tmp_path):
    """`pd.DataFrame(state.log_history).to_csv(...)`: an unnamed index, fractional epochs and no step column in one
    variant, and the closing `train_loss` (the run's average) beside the per-step `loss`."""
    rows = [f"{i},{2.0 - i / 10:.2f},{(i + 1) / 10:.2f},," for i in range(10)] + ["10,,1.0,0.6278,2.5"]
    (tmp_path / "log_history.csv").write_text(",loss,epoch,train_loss,train_runtime\n" + "\n".join(rows) + "\n")
    frame = csv_metrics.read(tmp_path / "log_history.csv").frame
    assert sorted(_series(frame, "loss")) == list(range(1, 11)) and _series(frame, "train_loss") == {11: 0.6278}
    assert _series(frame, "epoch")[10] == 1.0 and "" not in set(frame["metric"])


def test_nan_cells_are_values_and_empty_cells_are_not(tmp_path):
    (tmp_path / "metrics.csv").write_text("epoch,step,train_loss_step,val_loss\n0,1,2.5,\n0,2,nan,\n0,2,,2.7\n0,3,NaN,\n")
    frame = csv_metrics.read(tmp_path / "metrics.csv").frame
    loss = _series(frame, "loss")
    assert loss[1] == 2.5 and math.isnan(loss[2]) and math.isnan(loss[3]) and _series(frame, "eval_loss") == {2: 2.7}


def test_a_byte_that_is_not_utf8_costs_its_cell_only_and_is_said(tmp_path):
    # a `step<TAB>loss` table named train.log (Jayant-Guru-Shrivastava_ERAV4-Session11) with one damaged byte inside a
    # loss cell: scripts/cut_corpus_copies.py found the whole table refused for it, where every other text reader
    # replaces such bytes and says so (decoding.decode_text)
    rows = [f"{s}\t{3 * math.exp(-s / 40) + 0.5:.6f}\n" for s in range(10, 510, 10)]
    raw = ("step\tloss\n" + "".join(rows)).encode()
    at = raw.index(b"\n250\t") + 7  # inside the loss cell of step 250
    (tmp_path / "train.log").write_bytes(raw[:at] + b"\xff" + raw[at:])
    records = csv_metrics.read(tmp_path / "train.log")
    losses = _series(records.frame, "loss")
    assert sorted(losses) == [s for s in range(10, 510, 10) if s != 250]
    assert losses[240] == pytest.approx(3 * math.exp(-240 / 40) + 0.5, abs=1e-6)
    assert any("not UTF-8" in w for w in records.warnings)
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_utf8_table_has_no_encoding_warning(tmp_path):
    (tmp_path / "train.log").write_text("step\tloss\n" + "".join(f"{s}\t{2.0 / s:.4f}\n" for s in range(1, 40)))
    assert csv_metrics.read(tmp_path / "train.log").warnings == ()


def test_a_damaged_row_with_more_cells_than_the_header_costs_that_row_only_and_is_counted(tmp_path):
    # random bytes overwritten inside a `step<TAB>loss` table brought a tab: pandas refused the whole table for it
    rows = [f"{s}\t{3 * math.exp(-s / 40) + 0.5:.6f}\n" for s in range(10, 510, 10)]
    rows[24] = "250\t0.8\t#@\n"  # step 250's row, one cell too many
    (tmp_path / "train.log").write_text("step\tloss\n" + "".join(rows))
    records = csv_metrics.read(tmp_path / "train.log")
    assert sorted(_series(records.frame, "loss")) == [s for s in range(10, 510, 10) if s != 250]
    assert any("1 rows with more cells than the header" in w for w in records.warnings)
