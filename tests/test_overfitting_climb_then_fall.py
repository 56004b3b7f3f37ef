"""Tests of the overfitting rule (analyzers/overfitting.py): a climb over four evals, a wobble.

From day 7's second pass over datings and spikes the tool got wrong on real runs."""
from __future__ import annotations

import math

from support.shaped_logs import _analyze, _trainer_state, _wobble


# ---- (4) an eval loss that climbs eval after eval while the training loss falls, and later falls again --------------


_CLIMB_THEN_FALL = {250: 5.071, 500: 5.101, 750: 5.22, 1000: 5.262, 1250: 4.514, 1500: 1.169, 1750: 0.897,
                    2000: 0.944, 2250: 0.887, 2500: 0.871, 2750: 0.85, 3000: 0.856}


def test_an_eval_loss_climbing_over_four_evals_while_train_falls_is_overfitting_though_later_evals_fall(tmp_path):
    """Eval 5.07 -> 5.10 -> 5.22 -> 5.26 over the evals at 250-1000 while the training loss falls 4.9 -> 3.7, then
    both fall far lower: overfitting from the eval after the best (500), not healthy."""
    _trainer_state(tmp_path, list(range(10, 3010, 10)),
                   lambda s: (4.0 * math.exp(-s / 60) + 5.2 - 0.0016 * s if s < 1250 else 0.02 + 3.2 * math.exp(-(s - 1250) / 80))
                   * _wobble(s) + 0.0,
                   eval_loss=lambda s: _CLIMB_THEN_FALL.get(s), per_epoch=75)  # ~7 passes by 500, as in tomoqt's
    a = _analyze(tmp_path)
    over = [f for f in a.findings if f.kind == "overfitting"]
    assert over and over[0].step == 500, [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "overfitting" and a.first_incident.step == 500


def test_an_eval_loss_that_wobbles_while_both_fall_is_no_overfitting(tmp_path):
    """An eval loss falling with the training loss, up and down by a few thousandths between evals, three climbs in a
    row near the end (1.3% in all) where the training loss has levelled off: healthy."""
    wobbles = [0.0, 0.012, -0.006, 0.01, 0.004, -0.008, 0.011, 0.0, 0.004, 0.008, 0.012, 0.0]
    _trainer_state(tmp_path, list(range(10, 3010, 10)), lambda s: (0.8 + 2.0 * math.exp(-s / 400)) * _wobble(s),
                   eval_loss=lambda s: (0.9 + 2.0 * math.exp(-s / 400) + wobbles[s // 250 - 1]) if s % 250 == 0 else None,
                   per_epoch=3000)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "overfitting"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]
