"""Tests of ingest.loss_number_files: headerless step, loss, throughput, lr rows and bare-number files.

Corpus batch AS65's loss files of numbers only: a nanoGPT-style loop's headerless `step,loss,tok/s,lr` rows
(wadkisson_Personal-Chatbot's loss_history.txt) are read as the step, the loss and the learning rate, the throughput
left unread; np.savetxt's exponent floats (Simon-Zheng99_COGS_185_Final's training_loss.txt) and a bare-number
`valid_loss.txt` (SnpM_10601-HW7) are read as AS62's reader reads them."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest import loss_number_files
from forensics.discover.loss_numbers import loss_columns
from forensics.discover.run import discover

CORPUS = Path(__file__).parent / "realworld"


def _falling(n: int, start: float = 10.9, end: float = 3.2) -> list[float]:
    return [end + (start - end) * math.exp(-i / (n / 5)) for i in range(n)]


def _step_loss_tps_lr(n: int) -> list[str]:
    lrs = [6e-4 * min(1.0, (i + 1) / 20) for i in range(n)]
    return [f"{i},{v:.4f},{120000 + 37 * (i % 5):.2f},{lr:.6f}\n" for i, (v, lr) in enumerate(zip(_falling(n), lrs))]


def test_a_headerless_step_loss_throughput_lr_file_is_read_as_step_loss_and_learning_rate(tmp_path):
    (tmp_path / "loss_history.txt").write_text("".join(_step_loss_tps_lr(200)))
    assert [p.name for p in discover(tmp_path).loss_number_files] == ["loss_history.txt"]
    rec = loss_number_files.read(tmp_path / "loss_history.txt")
    assert sorted(rec.frame["metric"].unique()) == ["learning_rate", "loss"]  # the throughput column is not read
    lr = rec.frame[rec.frame["metric"] == "learning_rate"]
    assert lr["step"].tolist() == list(range(200)) and lr["value"].max() == pytest.approx(6e-4)


def test_a_step_loss_lr_file_with_a_healthy_curve_stays_healthy_and_silent(tmp_path):
    (tmp_path / "loss_history.txt").write_text("".join(_step_loss_tps_lr(300)))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.findings) == ("healthy", [])
    assert a.timeline.series("loss").iloc[0] == pytest.approx(10.9)


def test_four_numbers_a_line_without_one_lr_sized_column_are_not_read(tmp_path):
    no_lr = [f"{i},{v:.4f},{100 + i},{v / 2:.4f}\n" for i, v in enumerate(_falling(50))]
    (tmp_path / "loss_history.txt").write_text("".join(no_lr))
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


@pytest.mark.parametrize("rows", [
    [("1", "2.5", "0.0001", "0.0002"), ("2", "2.4", "0.0001", "0.0002"), ("3", "2.3", "0.0001", "0.0002")],  # two LRs
    [("2.5", "1", "100.0", "0.0001"), ("2.4", "2", "100.0", "0.0001"), ("2.3", "3", "100.0", "0.0001")],  # step second
    [("1", "0.001", "100.0", "0.0001"), ("2", "0.001", "100.0", "0.0001"), ("3", "0.001", "100.0", "0.0001")],
])
def test_four_columns_are_told_apart_only_as_step_loss_then_one_lr(rows):
    assert loss_columns(rows, "") is None


def test_wadkisson_loss_history_is_read_with_its_lr_and_profiled_full_pretrain():
    a = forensics.analyze(CORPUS / "wadkisson_Personal-Chatbot")
    assert a.timeline.series("loss").iloc[0] == pytest.approx(10.9709)
    assert a.timeline.series("learning_rate").loc[6301] == pytest.approx(0.000209)  # after the resume's LR drop
    assert (a.run_profile.method, a.run_profile.objective) == ("full", "pretrain")


@pytest.mark.parametrize("case", ["Simon-Zheng99_COGS_185_Final", "SnpM_10601-HW7"])
def test_the_as65_bare_number_files_are_read(case):
    a = forensics.analyze(CORPUS / case)
    assert len(a.timeline.series("loss")) >= 16
