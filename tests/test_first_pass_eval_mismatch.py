"""One or two evaluations far above the first epoch's training loss (forensics/analyzers/first_pass_eval.py): a
train_eval_mismatch when each evaluation falls within the first pass, silent where the eval loss is a few times a low
training loss or comes after a second epoch.

From branch fx-evalside (held-out evidence misread on real runs: the first of each pair FAILS on main at 2ae0b180, its
control ('stays silent') holds before and after) and branch fx-review3a (review of session 22's analyzer changes: each
behaviour test FAILS on main at 57e0ca20 and passes after; its control holds before and after)."""
from __future__ import annotations

from forensics.analyzers import run_all
from forensics.config import Thresholds

from support.state_points import finding_kinds as _kinds, first_of as _first, points_timeline as _timeline


# ---- one evaluation an order of magnitude above the first epoch's training loss ---------------------------------------

# alex-jk_SE-reddit-analysis: a one-epoch sentence-transformers run, embedding_loss read as the loss
ONE_EPOCH_TRAIN = {1: 0.4267, 50: 0.2274, 100: 0.0769, 150: 0.0074, 200: 0.0033, 250: 0.0024, 300: 0.0022}
ONE_EPOCH = {s: s / 300 for s in ONE_EPOCH_TRAIN}


def test_one_eval_loss_156x_the_one_epoch_training_loss_is_a_mismatch():
    """The training loss fell 0.427 -> 0.0022 over one pass (every batch new when scored), the one eval 0.344 at the
    same step: the held-out loss is where the untrained model started. The tool said healthy (three evaluations were
    needed to weigh the two); judged warning, train_eval_mismatch at 300."""
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.3436}, "epoch": ONE_EPOCH})
    assert (status, first) == ("warning", ("train_eval_mismatch", "warning", 300)), findings
    assert "156.2x the training loss at the one evaluation (0.3436 against 0.0022 at step 300" in findings[0].message


def test_one_eval_a_few_times_a_low_training_loss_stays_silent():
    """Its bound: an eval loss 4x a training loss near zero (0.009 against 0.0022), far under where training started,
    is two small losses, not two quantities; and 0.344 after a second epoch is no first-pass comparison."""
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.009}, "epoch": ONE_EPOCH})
    assert (status, first) == ("healthy", None), findings
    two_epochs = {s: 2 * s / 300 for s in ONE_EPOCH_TRAIN}
    status, first, findings = _first({"loss": ONE_EPOCH_TRAIN, "eval_loss": {300: 0.3436}, "epoch": two_epochs})
    assert "train_eval_mismatch" not in [f.kind for f in findings], findings


# ---- 1. one or two evaluations far above the first epoch's training loss: every one within that epoch ----------------

# alex-jk_SE-reddit-analysis's shape: embedding_loss 0.427 -> 0.0022 over one pass, its one eval 0.344
ONE_PASS_TRAIN = {1: 0.4267, 50: 0.2274, 100: 0.0769, 150: 0.0074, 200: 0.0033, 250: 0.0024, 300: 0.0022}


def test_two_evals_far_above_the_training_loss_the_second_past_the_first_epoch_are_no_first_pass_mismatch():
    """The first eval inside the first pass, the second after the second: the training batches beside the second were
    seen before, so the rule's premise (each batch new when scored) holds for one of the two only."""
    train = {**ONE_PASS_TRAIN, 350: 0.0020, 400: 0.0019, 450: 0.0018, 500: 0.0017, 550: 0.0016, 600: 0.0015}
    epochs = {s: s / 300 for s in train}
    found = _kinds({"loss": train, "eval_loss": {150: 0.3436, 600: 0.3400}, "epoch": epochs})
    assert not [k for k in found if k[0] == "train_eval_mismatch"], found


def test_two_evals_far_above_the_training_loss_both_in_the_first_epoch_are_a_mismatch():
    epochs = {s: s / 300 for s in ONE_PASS_TRAIN}
    found = _kinds({"loss": ONE_PASS_TRAIN, "eval_loss": {150: 0.3436, 300: 0.3400}, "epoch": epochs})
    assert ("train_eval_mismatch", "warning", 150) in found, found


def test_the_one_eval_mismatch_does_not_say_the_eval_loss_does_not_rise():
    """One evaluation has nothing to rise from: the message says why it is no overfitting in words that fit one."""
    epochs = {s: s / 300 for s in ONE_PASS_TRAIN}
    findings = run_all(_timeline({"loss": ONE_PASS_TRAIN, "eval_loss": {300: 0.3436}, "epoch": epochs}), Thresholds())
    message = next(f.message for f in findings if f.kind == "train_eval_mismatch")
    assert "does not rise" not in message and "the one evaluation comes before any example was seen twice" in message
    two = run_all(_timeline({"loss": ONE_PASS_TRAIN, "eval_loss": {150: 0.3436, 300: 0.3400}, "epoch": epochs}),
                  Thresholds())
    assert "the eval loss does not rise" in next(f.message for f in two if f.kind == "train_eval_mismatch")
