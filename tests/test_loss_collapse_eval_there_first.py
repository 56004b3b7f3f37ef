"""Tests of analyzers/collapse.py: a training loss at zero whose held-out loss got there no later is no collapse.

QuinnAho_csc-5991-hw1 (corpus batch AS106): a GRU seq2seq on a deterministic synthetic mapping, one point an epoch.
The training loss falls 2.32, 0.637, 0.156, 0.00326, then 3.4e-5 (epoch 5, read as a sudden fall from the median of
the epochs before), while the validation loss is already 7.3e-5 at epoch 4 and lower at every epoch after (3.0e-7 at
25): held-out data predicted as well before the training loss got there is the task learned
(`_held_out_already_at_zero`, asked from the last evaluation before the stretch, not from the first nor one
taken at its first step, which may have fallen with it)."""
from __future__ import annotations

import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.config import Thresholds

_TRAIN = [2.324, 0.637, 0.156, 0.00326, 3.41e-05, 8.36e-06, 5.15e-06, 3.9e-06, 3.11e-06, 1.05e-05, 1.18e-05,
          2.24e-06, 1.74e-06, 2.6e-06, 5.44e-05, 1.21e-06, 1.01e-06, 8.74e-07, 7.88e-07, 7.1e-07, 6.45e-07, 5.86e-07,
          5.48e-07, 5.11e-07, 4.59e-07]
_VAL = [1.912, 0.333, 0.0121, 7.35e-05, 7.71e-06, 4.43e-06, 3.09e-06, 2.43e-06, 1.94e-06, 1.85e-06, 1.63e-06,
        1.23e-06, 1.02e-06, 9.47e-07, 9.42e-07, 7.39e-07, 6.46e-07, 5.75e-07, 5.18e-07, 4.69e-07, 4.26e-07, 3.9e-07,
        3.58e-07, 3.28e-07, 3.02e-07]


def _kinds(val):
    epochs = range(1, len(_TRAIN) + 1)
    metrics = {"loss": pd.Series(_TRAIN, index=epochs, dtype="float64"),
               "eval_loss": pd.Series(val, index=epochs, dtype="float64")}
    return [f.kind for f in detect_loss_collapse(metrics, Thresholds())]


def test_a_held_out_loss_near_zero_before_the_training_loss_got_there_is_no_collapse():
    assert _kinds(_VAL) == []


def test_a_held_out_loss_that_reaches_zero_only_after_the_training_loss_fell_leaves_the_collapse():
    # held out still at 0.12 when the training loss fell to 3.4e-5 (epoch 5): both going to 0 after that is what a
    # target leaking into both splits gives as well
    assert _kinds(_VAL[:3] + [0.15, 0.12] + _VAL[5:]) == ["loss_collapse"]


def test_a_held_out_loss_that_stays_up_leaves_the_collapse():
    assert _kinds([1.9, 0.6, 0.45] + [0.4] * 22) == ["loss_collapse"]


def test_a_held_out_loss_that_falls_to_zero_at_the_collapse_step_itself_leaves_the_collapse():
    # review probe p5 (session 29): loss 2.0 -> 1.5, then 0.0 from step 500 with the held-out loss evaluated at the
    # same steps: an evaluation taken at the collapse's own step fell with it, it was not there first
    steps = range(10, 1010, 10)
    loss = [2.0 - s / 1000 if s < 500 else 0.0 for s in steps]
    evals = range(100, 1100, 100)
    metrics = {"loss": pd.Series(loss, index=steps, dtype="float64"),
               "grad_norm": pd.Series([1.3 if s < 500 else 0.0 for s in steps], index=steps, dtype="float64"),
               "eval_loss": pd.Series([2.1 - s / 1000 if s < 500 else 0.0 for s in evals], index=evals,
                                      dtype="float64")}
    found = detect_loss_collapse(metrics, Thresholds())
    assert [(f.kind, f.step) for f in found] == [("loss_collapse", 500)]
