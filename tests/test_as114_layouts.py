"""Three layouts of metric logs a run's own code wrote that the tool left unread (corpus batch AS114,
tests/realworld/PROVENANCE.md), each with the look-alike that must stay unread:

* a per-batch CSV of a one-epoch loop, `epoch,iter_num,train_loss,val_loss` (Jacobson-CompSysBio_JAILLM): the epoch
  column is the constant 0, so by epoch every row is at one step - but the loop's own counter, named for batches and
  never repeating, is the step; a per-example table (`epoch,guid,loss`) of one epoch stays refused;
* a dict whose `epochs` list holds per-epoch records with `train_loss` and a `val_metrics` dict holding the held-out
  loss (Diabloansh_headlineclassifier's results/training_log.json); an `epochs` list of numbers stays the parallel
  lists' epoch axis, and records without a loss are no history;
* an `epoch,avg_loss,accuracy` CSV (Parrajo41_train-200-bigram-animals): a loss named for how it was taken is the
  loss where the table has no plain one; a data column with `loss` in another sense (`packet_loss`) is none."""
from __future__ import annotations

import json
import math

import pytest

import forensics
from forensics.errors import NotARunDirectory, UnreadableFile
from forensics.ingest import csv_metrics, json_history
from forensics.table_headers import is_metrics_table_header
from forensics.discover.run import discover


def _falling(n: int, start: float, end: float, scale: float) -> list[float]:
    return [end + (start - end) * math.exp(-i / scale) for i in range(n)]


def _series(frame, metric: str) -> dict:
    rows = frame[frame["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


# --- a one-epoch loop's per-batch CSV --------------------------------------------------------------------------------

def _one_epoch_batches(n: int = 200) -> str:
    loss = _falling(n, 3.0, 1.2, 40)
    return "epoch,iter_num,train_loss,val_loss\n" + "".join(
        f"0,{i},{v:.5f},{v + 0.1:.5f}\n" for i, v in enumerate(loss, 1))


def test_a_one_epoch_per_batch_csv_is_read_at_its_iteration_counter(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "log.csv").write_text(_one_epoch_batches())
    frame = csv_metrics.read(tmp_path / "logs" / "log.csv").frame
    assert sorted(_series(frame, "loss")) == list(range(1, 201))
    assert len(_series(frame, "eval_loss")) == 200
    assert forensics.analyze(tmp_path).status == "healthy"


def test_a_one_epoch_per_example_table_with_an_id_column_is_still_refused(tmp_path):
    """The look-alike: one epoch's per-example losses, each example's id once - an id is no counter of updates."""
    (tmp_path / "scores.csv").write_text("epoch,guid,loss\n" + "".join(f"0,{g},{0.5 + g / 100:.3f}\n"
                                                                     for g in range(60)))
    with pytest.raises(UnreadableFile, match="per-example"):
        csv_metrics.read(tmp_path / "scores.csv")


def test_a_batch_counter_that_repeats_is_no_step_and_the_table_stays_refused(tmp_path):
    """A counter that comes back (the same batch number logged many times at one epoch) does not say one row a step."""
    (tmp_path / "scores.csv").write_text("epoch,batch,loss\n" + "".join(f"0,{b % 5},{0.5 + b / 100:.3f}\n"
                                                                      for b in range(60)))
    with pytest.raises(UnreadableFile, match="per-example"):
        csv_metrics.read(tmp_path / "scores.csv")


# --- per-epoch records under `epochs` with nested split metrics ------------------------------------------------------

def _epoch_record(epoch: int, train: float, val: float) -> dict:
    return {"epoch": epoch, "timestamp": "2026-04-03T21:01:41", "duration_seconds": 63.3, "train_loss": train,
            "train_metrics": {"accuracy": 0.99, "macro_f1": 0.99, "confusion_matrix": [[603, 0], [0, 478]],
                              "loss": train / 2},
            "val_metrics": {"accuracy": 0.994, "macro_f1": 0.9947, "confusion_matrix": [[60, 1], [0, 47]],
                            "loss": val},
            "learning_rate": 2e-5, "is_best": epoch == 1}


_TRAIN = [0.72, 0.0169, 0.00213, 0.0004, 0.00028, 0.0002, 0.00015, 0.0001]
_VAL = [0.0546, 0.01256, 0.0337, 0.0235, 0.0276, 0.0307, 0.0319, 0.0328]


def _epochs_log(train=_TRAIN, val=_VAL) -> dict:
    return {"start_time": "2026-04-03T21:01:41", "config": {"model_name": "bert-base-uncased", "num_epochs": 8},
            "epochs": [_epoch_record(i, t, v) for i, (t, v) in enumerate(zip(train, val), 1)],
            "device": "mps", "dataset_sizes": {"train": 1518, "val": 190}}


def test_epoch_records_with_nested_validation_metrics_are_found_and_read(tmp_path):
    (tmp_path / "results").mkdir()
    path = tmp_path / "results" / "training_log.json"
    path.write_text(json.dumps(_epochs_log(), indent=2))
    assert [p.name for p in discover(tmp_path).json_histories] == ["training_log.json"]
    frame = json_history.read(path).frame
    assert list(_series(frame, "loss").values()) == pytest.approx(_TRAIN)
    assert list(_series(frame, "eval_loss").values()) == pytest.approx(_VAL)
    assert list(_series(frame, "eval_accuracy").values()) == pytest.approx([0.994] * 8)


def test_epoch_records_whose_held_out_loss_only_falls_are_healthy(tmp_path):
    (tmp_path / "results").mkdir()
    train = _falling(8, 2.0, 0.8, 3)
    (tmp_path / "results" / "training_log.json").write_text(json.dumps(
        _epochs_log(train, [t + 0.1 for t in train])))
    assert forensics.analyze(tmp_path).status == "healthy"


def test_epoch_records_without_a_loss_are_no_history(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "scores.json").write_text(json.dumps(
        {"epochs": [{"epoch": i, "val_metrics": {"accuracy": 0.5 + i / 20}} for i in range(1, 9)]}))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_an_epochs_list_of_numbers_stays_the_parallel_lists_axis(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps({"epochs": [1, 2, 3, 4], "loss": [2.0, 1.5, 1.2, 1.1]}))
    assert json_history.history_of(json.loads((tmp_path / "history.json").read_text())) is not None
    frame = json_history.read(tmp_path / "history.json").frame
    assert list(_series(frame, "loss").values()) == [2.0, 1.5, 1.2, 1.1]


# --- a loss named for how it was taken ---------------------------------------------------------------------------

def test_an_epoch_avg_loss_table_is_found_and_read_as_the_loss(tmp_path):
    (tmp_path / "outputs").mkdir()
    loss = _falling(50, 2.5, 0.3, 8)
    (tmp_path / "outputs" / "train_log.csv").write_text("epoch,avg_loss,accuracy\n" + "".join(
        f"{i},{v:.8f},0.8\n" for i, v in enumerate(loss, 1)))
    assert [p.name for p in discover(tmp_path).csv_logs] == ["train_log.csv"]
    frame = csv_metrics.read(tmp_path / "outputs" / "train_log.csv").frame
    assert list(_series(frame, "loss").values()) == pytest.approx(loss, abs=1e-8)
    assert forensics.analyze(tmp_path).status == "healthy"


@pytest.mark.parametrize("header", [["step", "packet_loss", "latency"], ["epoch", "weight_loss_kg", "calories"],
                                    ["epoch", "avg_val_loss"]])
def test_a_column_with_loss_in_another_sense_or_a_held_out_average_is_no_training_loss(header):
    assert not is_metrics_table_header(header)


def test_a_plain_loss_column_stays_the_loss_beside_an_average(tmp_path):
    (tmp_path / "metrics.csv").write_text("step,loss,avg_loss\n" + "".join(
        f"{i},{1 + 1 / i:.4f},{1.5 + 1 / i:.4f}\n" for i in range(1, 11)))
    frame = csv_metrics.read(tmp_path / "metrics.csv").frame
    assert _series(frame, "loss")[1] == pytest.approx(2.0)


def test_a_records_validation_metrics_not_its_test_metrics_are_the_eval_loss():
    from forensics.ingest.json_nested_rows import split_dicts_flattened
    entry = {"epoch": 1, "train_loss": 0.5, "test_metrics": {"loss": 0.9}, "val_metrics": {"loss": 0.6}}
    assert split_dicts_flattened([entry])[0]["val_loss"] == 0.6
