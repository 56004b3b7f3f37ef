"""A loss blown up under a runaway LR to a clamp (forensics/analyzers/divergence.py): ending frozen there it is a
divergence (a dead model, not a recovery); the script's CSV it is read from names its loss and rate in capitals
(forensics/ingest/csv_metrics.py: `Epoch,Loss,CurrentLR,BestLoss,StagnantEpochs`).

From batch AS65's learning-rate misses (tests/realworld/PROVENANCE.md: ChristianPE1_transformer-test). Tables are
written here."""
from __future__ import annotations

import math

import numpy as np

import forensics
from forensics.analyzers.divergence import detect_divergence
from forensics.config import Thresholds
from forensics.ingest import csv_metrics


TH = Thresholds()


def _plateau_scheduler_run(frozen_end: bool) -> str:
    """ChristianPE1's table: the loss falls 7.6 -> 4.3 by epoch 107 while the LR, 0.015 until epoch 22, grows 5% an
    epoch; then it climbs to a 20.0 clamp (epochs 170-473), comes down to about 8 and ends at 6.78 for 20 epochs:
    one exact value (frozen) or, for the control, noise around it."""
    rng = np.random.default_rng(3)
    rows, best = ["Epoch,Loss,CurrentLR,BestLoss,StagnantEpochs"], math.inf
    for epoch in range(1, 501):
        lr = 0.015 * 1.05 ** max(0, epoch - 22)
        if epoch <= 107:
            loss = 4.28 + 3.36 * (107 - epoch) / 106 + 0.02 * float(rng.standard_normal())
        elif epoch < 170:
            loss = min(20.0, 4.28 * 1.03 ** (epoch - 107))
        elif epoch <= 473:
            loss = 20.0
        elif epoch <= 480:
            loss = 8.2 + 0.3 * float(rng.standard_normal())
        else:
            loss = 6.78361 if frozen_end else 6.78 + 0.3 * float(rng.standard_normal())
        best = min(best, loss)
        rows.append(f"{epoch},{loss:.6f},{lr:.6f},{best:.6f},0")
    return "\n".join(rows) + "\n"


def test_capitalised_loss_and_current_lr_columns_are_the_loss_and_the_rate(tmp_path):
    path = tmp_path / "training_loss.txt"
    path.write_text(_plateau_scheduler_run(frozen_end=True))
    metrics = set(csv_metrics.read(path).frame["metric"])
    assert {"loss", "learning_rate"} <= metrics
    assert "BestLoss" in metrics and "Loss" not in metrics and "CurrentLR" not in metrics  # a running best stays apart


def test_an_lr_column_in_capitals_is_the_rate_and_lightning_step_losses_keep_their_name(tmp_path):
    (tmp_path / "a.csv").write_text("step,Train_Loss,LR\n1,2.5,0.001\n2,2.4,0.001\n")
    (tmp_path / "b.csv").write_text("epoch,step,train_loss_step,val_loss\n0,49,7.39,\n0,99,7.50,\n0,99,,7.2\n")
    assert set(csv_metrics.read(tmp_path / "a.csv").frame["metric"]) == {"loss", "learning_rate"}
    assert set(csv_metrics.read(tmp_path / "b.csv").frame["metric"]) == {"epoch", "loss", "eval_loss"}


def test_a_loss_blown_up_to_a_clamp_that_ends_frozen_is_a_divergence(tmp_path):
    (tmp_path / "training_loss.txt").write_text(_plateau_scheduler_run(frozen_end=True))
    analysis = forensics.analyze(tmp_path)
    assert analysis.status == "broken"
    assert analysis.first_incident.kind == "divergence" and 108 <= analysis.first_incident.step <= 128
    assert "ends frozen at exactly 6.784" in analysis.first_incident.message


def test_a_loss_that_comes_back_from_its_clamp_and_still_moves_is_no_divergence(tmp_path):
    path = tmp_path / "training_loss.txt"
    path.write_text(_plateau_scheduler_run(frozen_end=False))
    frame = csv_metrics.read(path).frame
    metrics = {name: group.set_index("step")["value"] for name, group in frame.groupby("metric")}
    assert detect_divergence(metrics, TH) == []
