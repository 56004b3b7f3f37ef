"""The step column of a CSV metrics table (forensics/ingest/csv_metrics.py, run.py): a W&B panel export's `_step` and
every step key the JSON-lines readers know.

From corpus batch AS70 (JlPang863_QualityDPO)."""
from __future__ import annotations

import math

import pytest

import forensics
from forensics.ingest import csv_metrics
from forensics.metric_names import JSON_LINE_STEP_KEYS
from forensics.discover.run import discover


def _falling(n: int, start: float, end: float, scale: float) -> list[float]:
    return [end + (start - end) * math.exp(-i / scale) for i in range(n)]


# --- a W&B panel export's `_step` ------------------------------------------------------------------------------------

def test_a_wandb_export_with_an_underscore_step_column_is_read_as_a_metrics_table(tmp_path):
    loss = _falling(30, 2.5, 1.2, 8)
    (tmp_path / "train_loss.csv").write_text("_step,train/loss\n" + "".join(f"{i},{v}\n" for i, v in enumerate(loss)))
    assert [p.name for p in discover(tmp_path).csv_logs] == ["train_loss.csv"]
    a = forensics.analyze(tmp_path)
    assert a.timeline.series("loss").tolist() == pytest.approx(loss)
    assert a.status == "healthy"


@pytest.mark.parametrize("key", JSON_LINE_STEP_KEYS)
def test_the_table_step_columns_are_the_json_lines_step_keys(tmp_path, key):
    """Each step key the JSON-lines readers know names a CSV table's step column too: found as a metrics table, its
    rows at that column's steps (TABLE_STEP_COLUMNS is built from the keys; compared with them, it could not fail)."""
    (tmp_path / "metrics.csv").write_text(f"{key},loss\n10,2.0\n20,1.5\n30,1.2\n")
    assert [p.name for p in discover(tmp_path).csv_logs] == ["metrics.csv"]
    frame = csv_metrics.read(tmp_path / "metrics.csv").frame
    assert frame[frame.metric == "loss"]["step"].tolist() == [10, 20, 30]
