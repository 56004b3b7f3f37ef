"""Tests of the console readers: tqdm postfixes, eval bars, CRLF line ends.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

import numpy as np

import forensics
from support.review_runs import falling
from support.written_runs import _analyze, _kinds, _write


def _bar(label, n, total, postfix):
    return f"{label}: {100 * n // total}%|{'#' * (10 * n // total):10s}| {n}/{total} [00:{n % 60:02d}<00:10, 9.50it/s, {postfix}]"


# ---- run._LOSS_PRINT -----------------------------------------------------------------------------------------------


def test_lucidrains_prints_with_crlf_line_ends_are_read(tmp_path):
    """Stands for an x-transformers / lucidrains script's stdout saved on Windows (CRLF): `training loss: X` once a
    batch, `validation loss: X` every tenth. _hinted turns every \\r into \\n, so each print is followed by an empty
    line and the new back-to-back lookahead never matches: NotARunDirectory (before the change: 60 losses read,
    healthy). Fix: run._hinted (replace \\r\\n by \\n before lone \\r) or run._LOSS_PRINT (allow \\n\\n)."""
    v = falling(60, 3.0, 1.8)
    text = "".join(f"training loss: {x:.4f}\r\n" + (f"validation loss: {x + 0.1:.4f}\r\n" if i % 10 == 0 else "")
                   for i, x in enumerate(v))
    a = _analyze(_write(tmp_path, "train.log", text, newline=""))
    assert len(a.timeline.series("loss")) == 60


# ---- pretrain_lines._tqdm_postfix ----------------------------------------------------------------------------------


def test_tqdm_postfix_capitalised_single_word_loss_is_the_training_loss(tmp_path):
    """Stands for a hand-written loop's `pbar.set_postfix(Loss=loss.item())` (tqdm draws `Loss=2.312`), with an
    `Evaluating` bar's `Val Loss=` after each epoch. The bar is now matched (case-insensitive `loss`) but only a key
    of several words is lower-cased: `Loss` stays `Loss`, not the training loss, so the tool reads the three eval
    points and no training loss at all (healthy from evals alone). Fix: pretrain_lines._tqdm_postfix: lower-case
    every key (`Loss`, `LR`) before canonical_metric, not only keys with a space."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100, f"Loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}")
                  for n in range(1, 101)]
        lines += [_bar(f"Epoch {e + 1} [val]", n, 20, f"Val Loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(a.timeline.series("loss")) >= 250


def test_eval_bar_without_epoch_label_keeps_the_training_loss(tmp_path):
    """Stands for a custom loop: `Epoch 1/3` bar (100 batches, `loss=`) then an `Evaluating` bar (20 batches,
    `val_loss=`) with no epoch in its label, three epochs. Each eval bar's steps 1..20 read as a restart: four
    segments, the judged series only the last epoch's loss (99 of 300 points, from step 201) and evals at 1 and 21 (already so before the change; the new
    _evaluation_placed places only an eval bar that names its epoch). Fix: stdout._evaluation_placed /
    _tqdm_postfix_changes: an eval-only bar with no epoch goes at the last training step seen, and does not restart
    the training numbering."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100, f"loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}")
                  for n in range(1, 101)]
        lines += [_bar("Evaluating", n, 20, f"val_loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(a.timeline.series("loss")) >= 250
    assert list(a.timeline.series("eval_loss").index) == [100, 200, 300]


def test_epoch_labelled_val_bar_with_multi_word_keys_is_placed_at_its_epochs_end(tmp_path):
    """Coverage: `Training Loss=` bars and an `Epoch E [val]` bar with `Val Loss=`: evals at 100, 200, 300."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100,
                       f"Training Loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}") for n in range(1, 101)]
        lines += [_bar(f"Epoch {e + 1} [val]", n, 20, f"Val Loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert list(a.timeline.series("eval_loss").index) == [100, 200, 300]
    assert a.status == "healthy", _kinds(a)


def test_odd_tqdm_postfixes_give_no_traceback(tmp_path):
    """Coverage: `Loss (avg)=`, nan/inf values, a key of six words, `lr 1e-5` without '=': no exception."""
    for i, post in enumerate(["Loss (avg)=0.5, Val Loss=0.6", "loss=nan, Val Loss=inf", "Train Loss=0.5 lr 1e-5",
                              "a b c d e f loss=0.3", "Epoch Loss=1, Batch Loss=2"]):
        lines = [_bar(f"Epoch {e}", n, 10, post) for e in range(3) for n in range(1, 11)]
        try:
            _analyze(_write(tmp_path / str(i), "train.log", "\n".join(lines) + "\n"))
        except forensics.errors.NotARunDirectory:
            pass
