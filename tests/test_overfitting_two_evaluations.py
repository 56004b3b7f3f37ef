"""Overfitting on two evaluations (forensics/analyzers/overfitting.py): the second no better while the training loss
fell a third is overfitting; at a plateau of the training loss, or with two equal evaluations, it is not.

From branch fx-evalside (the first of each pair FAILS on main at 2ae0b180, its control holds before and after) and
branch fx-review3a (each behaviour test FAILS on main at 57e0ca20 and passes after; its control holds before and
after)."""
from __future__ import annotations

from support.state_points import finding_kinds as _kinds, first_of as _first


# ---- two evaluations: the second bought nothing while the training loss fell a third ----------------------------------


def test_a_second_eval_no_better_while_the_epoch_training_loss_fell_a_third_is_overfitting():
    """jonathanbgn_slogan-generator: distilgpt2 at LR 1e-3, epoch-mean training cost 4.1394 -> 2.6903 (-35%, from above
    the first validation cost to below the second), validation cost 3.2550 -> 3.2779 (+0.7%). The tool said only
    no_learning_evidence (a rise under the 3% a turn needs); judged warning, overfitting at epoch 2."""
    status, first, findings = _first({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.277905},
                                      "epoch": {1: 1.0, 2: 2.0}})
    assert (status, first) == ("warning", ("overfitting", "warning", 2)), findings


def test_a_second_eval_no_better_at_a_plateau_of_the_training_loss_stays_healthy():
    """Its bound: Ishihara-Masabumi's shape, the last eval 0.8% over the best with the training loss near 0.60 at both
    (judged healthy); and a second eval that fell while the training loss fell a third."""
    train = {s: 0.62 - 0.00002 * s for s in range(10, 1681, 10)}
    epochs = {s: s / 560 for s in train}
    status, first, findings = _first({"loss": train, "eval_loss": {1120: 0.7150, 1680: 0.7206}, "epoch": epochs})
    assert "overfitting" not in [f.kind for f in findings], findings
    status, first, findings = _first({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.21},
                                      "epoch": {1: 1.0, 2: 2.0}})
    assert "overfitting" not in [f.kind for f in findings], findings


# ---- 5. two equal evaluations are no rise ---------------------------------------------------------------------------


def test_a_second_eval_equal_to_the_first_while_the_training_loss_fell_a_third_is_no_overfitting():
    """jonathanbgn_slogan-generator's shape (epoch-mean training cost 4.1394 -> 2.6903) with the validation cost the
    same at both evaluations: +0% is no rise, so no overfitting onset."""
    found = _kinds({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.255028},
                    "epoch": {1: 1.0, 2: 2.0}})
    assert "overfitting" not in [k[0] for k in found], found


def test_a_second_eval_above_the_first_while_the_training_loss_fell_a_third_is_still_overfitting():
    found = _kinds({"loss": {1: 4.139444, 2: 2.690343}, "eval_loss": {1: 3.255028, 2: 3.277905},
                    "epoch": {1: 1.0, 2: 2.0}})
    assert ("overfitting", "warning", 2) in found, found
