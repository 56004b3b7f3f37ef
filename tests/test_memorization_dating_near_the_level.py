"""Tests of the memorization rule's dating: where the loss nears the memorized level.

From day 7's second pass over datings and spikes the tool got wrong on real runs."""
from __future__ import annotations

import math

from support.shaped_logs import _analyze, _trainer_state, _wobble


# ---- (1) memorization dated where the loss reaches the memorized level, not where a fast descent levels off ---------


def _levels_off_high_then_creeps_to_zero(s):
    """A LoRA on 100 examples: from near chance (9 nats) to about 0.5 within its first two passes, then down to 0.04
    over the eight passes after."""
    if s < 170:
        return (0.5 + 8.5 * math.exp(-s / 35)) * _wobble(s)
    return (0.04 + 0.46 * math.exp(-(s - 170) / 200)) * _wobble(s)


def test_memorization_is_dated_where_the_loss_nears_the_memorized_level_not_where_its_fast_descent_ends(tmp_path):
    _trainer_state(tmp_path, list(range(2, 762, 2)), _levels_off_high_then_creeps_to_zero)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization"
    # the fast descent levels off at ~0.5 by step ~180 (epoch 1.8); the loss is under 0.15 from about step 450
    assert 400 <= a.first_incident.step <= 600, a.first_incident.message


def test_a_fine_tune_that_settles_well_above_the_memorized_level_is_healthy(tmp_path):
    """The same descent levelling off at 0.5 nats and staying there: a model that learned, nothing memorized."""
    _trainer_state(tmp_path, list(range(2, 762, 2)),
                   lambda s: (0.5 + 8.5 * math.exp(-s / 35)) * _wobble(s))
    a = _analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert not [f for f in a.findings if f.kind == "memorization"]
