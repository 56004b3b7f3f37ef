"""Tests of analyzers/learning_evidence.py: two held-out preference evaluations.

From the day-10 guard pass two (rules that called unlearned or overfitting runs fine): each run is a small HF
Trainer `trainer_state.json` built as the reviewer built it, beside a run the rule must still let through."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from support.state_writes import _analyze, _kinds, _write_state


# ---- (2) a couple of held-out evaluations: moving in the fourth decimal at ln 2 is no sign the preference carries over


def _dpo_two_epochs(folder, eval_losses, eval_accuracies, eval_margins, seed=5):
    """TRL DPO, 2 epochs over a small preference set, logging every 10 steps, an eval at each epoch's end: the training
    pairs are learned (loss 0.693 -> 0.25, reward accuracy 0.5 -> 0.95); the held-out pairs score as given."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(40):
        step = 10 * (i + 1)
        loss = 0.25 + 0.443 * math.exp(-i / 8) + 0.02 * rng.standard_normal()
        acc = min(1.0, 0.5 + 0.45 * (1 - math.exp(-i / 8)) + 0.03 * rng.standard_normal())
        m = -math.log(math.exp(loss) - 1)  # the margin implied by -log sigmoid(m) = loss
        log.append({"step": step, "epoch": round(step / 200, 3), "loss": round(loss, 4), "learning_rate": 5e-6,
                    "rewards/chosen": round(m / 2, 4), "rewards/rejected": round(-m / 2, 4),
                    "rewards/accuracies": round(acc, 3), "rewards/margins": round(m, 4), "logps/chosen": -200.0,
                    "logps/rejected": -210.0, "grad_norm": 3.0})
        if step % 200 == 0:
            k = step // 200 - 1
            log.append({"step": step, "epoch": round(step / 200, 3), "eval_loss": eval_losses[k],
                        "eval_rewards/accuracies": eval_accuracies[k], "eval_rewards/margins": eval_margins[k],
                        "eval_rewards/chosen": 0.01, "eval_rewards/rejected": 0.01})
    _write_state(folder, log, max_steps=400, num_train_epochs=2)


def test_two_held_out_evals_at_ln2_and_chance_while_the_training_pairs_are_memorised_is_no_learning_evidence(tmp_path):
    _dpo_two_epochs(tmp_path, [0.6931, 0.6929], [0.5, 0.5], [0.0004, 0.0008])
    a = _analyze(tmp_path)
    assert a.status == "warning", [f.message for f in a.findings]
    assert "no_learning_evidence" in _kinds(a), [f.message for f in a.findings]


def test_two_held_out_evals_falling_under_ln2_with_accuracy_above_chance_show_no_fault(tmp_path):
    # a DPO LoRA's two epoch-end evals: loss 0.686 -> 0.679, accuracy 0.55 -> 0.57, margin 0.02 -> 0.09
    _dpo_two_epochs(tmp_path, [0.6861, 0.6786], [0.548, 0.566], [0.023, 0.088])
    a = _analyze(tmp_path)
    assert "no_learning_evidence" not in _kinds(a), [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


def test_a_nan_evaluation_between_two_improving_ones_does_not_make_them_a_couple_of_evals():
    from forensics.analyzers.learning_evidence import learning_shown
    from forensics.config import Thresholds

    steps = list(range(10, 310, 10))
    loss = [0.25 + 0.443 * math.exp(-i / 8) for i in range(30)]
    metrics = {"loss": pd.Series(loss, index=steps), "rewards/accuracies": pd.Series(
        [0.5 + 0.45 * (1 - math.exp(-i / 8)) for i in range(30)], index=steps),
        "eval_loss": pd.Series([0.6861, float("nan"), 0.6786], index=[100, 200, 300]),
        "eval_rewards/accuracies": pd.Series([0.548, 0.55, 0.566], index=[100, 200, 300])}
    # three evaluations, one not finite: the held-out pairs must show the learning, and at 0.6786 they do not
    assert learning_shown(metrics, Thresholds()) is None
