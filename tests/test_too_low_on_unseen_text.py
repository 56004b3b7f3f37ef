"""A loss far under what unseen text allows inside the first pass over the data, near 0 from the next logged point to
the end: a `loss_collapse` warning dated at that first-pass point, even in a log of three or four points (a point
every 500-2000 steps). Runs built as metric Series the way the Trainer logs them (a loss and an epoch at each logged
step); the runs that learned a regular target (a live grad_norm, a loss that stays above near zero), those whose
held-out loss is high, and those that got near 0 only after a second pass stay as they were."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.collapse import detect_loss_collapse
from forensics.analyzers.zero_in_first_epoch import for_epochs_over_a_sized_dataset
from forensics.config import Thresholds

TH = Thresholds()
CORPUS = Path(__file__).resolve().parent / "realworld"


def _run(loss: list[float], every: int, steps_an_epoch: float, **more: dict[int, float]) -> dict[str, pd.Series]:
    steps = np.arange(1, len(loss) + 1) * every
    metrics = {"loss": pd.Series(loss, index=steps, dtype="float64"),
               "epoch": pd.Series(steps / steps_an_epoch, index=steps, dtype="float64")}
    metrics.update({name: pd.Series(values, dtype="float64") for name, values in more.items()})
    return metrics


def _collapse(findings):
    return next((f for f in findings if f.kind == "loss_collapse"), None)


def _set_up_in_epochs(metrics) -> list:
    return for_epochs_over_a_sized_dataset(detect_loss_collapse(metrics, TH), metrics, TH)


def test_a_first_point_already_far_under_unseen_text_then_near_zero_is_a_collapse_there():
    # qwu01's Reformer: logged every 500 steps of 681 an epoch, 0.042 at epoch 0.73, ~1e-4 after; eval 3e-5 at the end
    metrics = _run([0.0424, 0.0001, 0.00006, 0.000045], every=500, steps_an_epoch=681,
                   eval_loss={2043: 0.0000315})
    findings = detect_loss_collapse(metrics, TH)
    found = _collapse(findings)
    assert found is not None and (found.severity, found.step) == ("warning", 500)
    assert found.evidence["first_epoch"] and found.evidence["near_zero_step"] == 1000
    assert not any(f.kind == "memorization" for f in findings)  # no example had been seen twice at 0.042


def test_a_one_epoch_run_set_up_in_epochs_that_falls_near_zero_in_its_first_pass_is_a_collapse():
    # Vanh253333's bert2bert: one epoch of 6589 steps logged every 2000, 0.715 -> 0.0020 (epoch 0.61) -> 0.0004
    metrics = _run([0.715, 0.002, 0.0004], every=2000, steps_an_epoch=6589)
    assert _collapse(detect_loss_collapse(metrics, TH)) is None  # by itself, a stream's fraction of max_steps
    found = _collapse(_set_up_in_epochs(metrics))
    assert found is not None and (found.severity, found.step) == ("warning", 4000)


def test_the_corpus_run_whose_training_args_leave_max_steps_unset_is_judged_a_collapse_without_optimizer_causes():
    a = forensics.analyze(CORPUS / "Vanh253333_cp")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "loss_collapse", 4000)
    assert a.causes == []  # no warm-up or learning rate makes the labels trivial


def test_the_same_fall_with_a_live_grad_norm_stays_silent():
    # a regular target learned: the gradient is still there at 0.002 nats
    metrics = _run([0.715, 0.002, 0.0004], every=2000, steps_an_epoch=6589,
                   grad_norm={2000: 1.3, 4000: 0.31, 6000: 0.22})
    assert _collapse(_set_up_in_epochs(metrics)) is None


def test_a_regular_target_learned_to_a_few_thousandths_in_its_first_pass_stays_silent():
    # t5-small on a very regular format: 0.005 at the first epoch's end, 0.004-0.007 in the second, never near 0
    metrics = _run([2.2, 0.03, 0.0054, 0.0045, 0.0067], every=800, steps_an_epoch=2000)
    assert _collapse(_set_up_in_epochs(metrics)) is None


def test_a_held_out_loss_far_above_the_training_loss_stays_silent():
    metrics = _run([0.715, 0.002, 0.0004], every=2000, steps_an_epoch=6589, eval_loss={6000: 1.8})
    assert _collapse(_set_up_in_epochs(metrics)) is None


def test_a_loss_near_zero_only_after_its_second_pass_stays_silent():
    # 0.04 late in the first pass, but near 0 only from epoch 2.8: repeated passes could have learned it by heart
    metrics = _run([0.04, 0.01, 0.005, 0.0005, 0.0003], every=700, steps_an_epoch=1000)
    assert _collapse(_set_up_in_epochs(metrics)) is None
