"""Overfitting's message reads the training loss after the best eval even where the training loss is logged more
sparsely than the evals and no training point falls at or before the best one: the first training point after it is
its level there (a classifier evaluated every epoch, its training loss logged every five epochs)."""
from __future__ import annotations

import json

import forensics

EPOCH = 98


def _run(tmp_path, train_losses):
    rows = []
    evals = [1.51, 1.2, 1.0, 0.9, 0.82, 0.85, 0.87, 0.89, 0.92, 1.03, 1.08, 1.14, 1.2, 1.25]
    for i, v in enumerate(evals, start=1):
        rows.append({"eval_loss": v, "epoch": float(i), "step": i * EPOCH})
    for j, v in enumerate(train_losses, start=1):
        rows.append({"loss": v, "learning_rate": 2e-5 * (1 - j / 10), "epoch": j * 500 / EPOCH, "step": j * 500})
    rows.sort(key=lambda r: r["step"])
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": 14 * EPOCH}))
    return forensics.analyze(folder, check_checkpoints=False)


def _overfitting(a):
    return next(f for f in a.findings if f.kind == "overfitting")


def test_a_training_loss_first_logged_after_the_best_eval_is_read_as_falling(tmp_path):
    f = _overfitting(_run(tmp_path, [0.935, 0.0765, 0.0123]))
    assert "training loss keeps falling" in f.message, f.message
    assert "did not improve" not in f.message


def test_a_flat_training_loss_first_logged_after_the_best_eval_did_not_improve(tmp_path):
    """Not fire: the training loss first logged after the best eval stays where it was."""
    f = _overfitting(_run(tmp_path, [0.60, 0.61, 0.60]))
    assert "did not improve" in f.message, f.message
