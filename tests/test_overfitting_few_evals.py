"""Tests of the overfitting rule (analyzers/overfitting.py) on a few evaluations.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import math

import forensics
from support.judged_logs import _kinds, _trainer_state


# 3. few evals: a held-out loss that stopped improving while the training loss kept falling

def _epochs_history(evals, train_levels, per_epoch=200, eval_every=250):
    """Train loss logged every 10 steps, dropping at each epoch boundary to the next of `train_levels` (with per-step
    noise), an eval every `eval_every` steps taking the values `evals` in turn."""
    n = per_epoch * len(train_levels)
    history = []
    for step in range(10, n + 1, 10):
        level = train_levels[(step - 1) // per_epoch]
        history.append({"epoch": round(step / per_epoch, 3), "grad_norm": 1.0 + 0.1 * math.sin(step),
                        "learning_rate": 2e-4 * (1 - step / n), "loss": round(level + 0.04 * math.sin(step * 0.7), 4),
                        "step": step})
        if step % eval_every == 0 and step // eval_every <= len(evals):
            history.append({"epoch": round(step / per_epoch, 3), "eval_loss": evals[step // eval_every - 1],
                            "eval_runtime": 10.0, "step": step})
    return history


def test_few_evals_that_rise_off_their_best_while_the_train_loss_falls_are_overfitting(tmp_path):
    """Four evals, 1.806, 1.785 (the best), 1.810, 1.808, while the training loss drops at each epoch boundary
    1.85 -> 1.60 -> 1.42: the held-out loss stopped improving and sits 1.3% above its best while the training loss
    fell 17% more: an overfitting warning from the first eval after the best (step 750). Before: no finding, the four
    evals too few for the climb and noise rules."""
    history = _epochs_history([1.806, 1.785, 1.810, 1.808], [1.85, 1.60, 1.42, 1.42], per_epoch=250, eval_every=250)
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 750)


def test_few_evals_still_falling_or_level_with_a_falling_train_loss_are_healthy(tmp_path):
    """The same training loss with evals that keep improving (1.806, 1.785, 1.770, 1.768), or that level off within
    1% of their best (1.806, 1.785, 1.789, 1.790): no overfitting, healthy."""
    for name, evals in (("falling", [1.806, 1.785, 1.770, 1.768]), ("level", [1.806, 1.785, 1.789, 1.790])):
        history = _epochs_history(evals, [1.85, 1.60, 1.42, 1.42], per_epoch=250, eval_every=250)
        a = forensics.analyze(_trainer_state(tmp_path / name, history))
        assert "overfitting" not in _kinds(a), name
        assert a.status == "healthy", (name, [(f.kind, f.step) for f in a.findings])
