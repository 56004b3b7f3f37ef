"""Tests of the log.txt reader of Meta's DINO / DeiT scripts.

From the logs the tool did not read, or read wrongly, found on real runs (day 7)."""
from __future__ import annotations

import json
import math

from support.final_series import _analyze, _series


# ---- (1) the Meta research repositories' log.txt: JSON lines, one dict an epoch ---------------------------------------


def _meta_log(path, epochs, loss, test=None):
    """DINO / DeiT / MAE / ConvNeXt main_*.py: `log_stats = {**{f'train_{k}': v ...}, **{f'test_{k}': v ...},
    'epoch': epoch}` written with `f.write(json.dumps(log_stats) + "\\n")` to output_dir/log.txt."""
    with open(path, "w") as fh:
        for i, epoch in enumerate(epochs):
            stats = {"train_loss": loss(i), "train_lr": 5e-4 * (1 - i / len(epochs)), "train_wd": 0.04 + 0.001 * i}
            if test is not None:
                stats.update({"test_loss": test(i), "test_acc1": 40.0 + i, "test_acc5": 70.0 + i})
            stats.update({"epoch": epoch, "n_parameters": 21_000_000})
            fh.write(json.dumps(stats) + "\n")


def test_a_dino_log_txt_stuck_at_ln_of_its_head_is_read_and_never_learned(tmp_path):
    """DINO's log.txt (one `{"train_loss", "train_lr", "train_wd", "epoch"}` line an epoch) whose loss sits at
    ln(65536) on every line: the file was not read at all (NotARunDirectory); it is a JSON-lines log at its epochs."""
    _meta_log(tmp_path / "log.txt", range(100, 112), lambda i: math.log(65536) - 1e-6)
    a = _analyze(tmp_path)
    assert a.status == "broken" and a.first_incident.kind == "never_learned"
    assert a.first_incident.step == 100
    assert any("epoch is its step" in s.reason for s in a.skipped if s.note)


def test_a_deit_log_txt_with_test_loss_reads_train_as_loss_and_test_as_eval(tmp_path):
    """DeiT / MAE finetune / ConvNeXt log.txt with `test_loss` / `test_acc1` beside `train_loss`, under any name
    (train.log): train_loss is the training loss, test_loss the held-out one; the epochs are the steps."""
    _meta_log(tmp_path / "train.log", range(0, 30), lambda i: 6.9 * 0.93 ** i, test=lambda i: 6.5 * 0.95 ** i)
    a = _analyze(tmp_path)
    loss, held = _series(a, "loss"), _series(a, "eval_loss")
    assert sorted(loss) == list(range(30)) and sorted(held) == list(range(30))
    assert math.isclose(loss[0], 6.9) and math.isclose(held[29], 6.5 * 0.95 ** 29)
    assert a.status == "healthy", [f.message for f in a.findings]
