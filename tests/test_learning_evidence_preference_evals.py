"""Tests of analyzers/learning_evidence.py: a preference run's two evaluations.

From the day-10 review of healthy real runs the tool doubted; each test builds a small log as the real program
writes it."""
from __future__ import annotations

import json
import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (3) a preference run's two improving evaluations are no sign the preference fails to carry over -------------


def _dpo_trainer_state(folder, eval_losses, eval_accuracies, eval_margins):
    """A TRL DPOTrainer's trainer_state.json over two epochs of 94 steps, logging every 10 and evaluating at each
    epoch's end: the loss at ln 2 through epoch 1 (margins near 0, accuracy about 0.5), then down to 0.55 in epoch 2
    (accuracy 0.72-0.8) as the training pairs come round again."""
    log = []
    for step in range(10, 190, 10):
        second = step > 94
        loss = 0.62 - 0.07 * (step - 100) / 80 + 0.01 * math.sin(step) if second else 0.6925 - 0.0008 * (step % 30) / 10
        log.append({"loss": round(loss, 4), "grad_norm": 2.1 + 0.3 * math.sin(step), "learning_rate": 2e-05,
                    "rewards/chosen": 0.1 if second else 0.002, "rewards/rejected": -0.2 if second else -0.001,
                    "rewards/accuracies": round(0.72 + 0.1 * (step - 100) / 80 if second else 0.49 + 0.01 * (step % 4),
                                                4),
                    "rewards/margins": 0.3 if second else 0.003, "epoch": round(step / 94, 4), "step": step})
        if step + 10 > 94 * (1 + second) or step == 180:
            i = int(second)
            log.append({"eval_loss": eval_losses[i], "eval_rewards/accuracies": eval_accuracies[i],
                        "eval_rewards/margins": eval_margins[i], "epoch": round(step / 94, 4), "step": step})
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": 188, "max_steps": 188,
                                                           "logging_steps": 10, "num_train_epochs": 2}))


def test_two_preference_evaluations_that_both_improve_are_not_read_as_no_learning(tmp_path):
    _dpo_trainer_state(tmp_path, (0.6861, 0.6786), (0.548, 0.566), (0.023, 0.088))
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"], [f.message for f in a.findings]
    assert a.status == "healthy" and a.learning is not None, [f.message for f in a.findings]


def test_two_preference_evaluations_whose_loss_rose_still_show_no_learning_on_held_out_pairs(tmp_path):
    _dpo_trainer_state(tmp_path, (0.6861, 0.6903), (0.548, 0.566), (0.023, 0.015))
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]


def test_two_preference_evaluations_whose_accuracy_fell_still_show_no_learning_on_held_out_pairs(tmp_path):
    _dpo_trainer_state(tmp_path, (0.6861, 0.6846), (0.566, 0.548), (0.023, 0.030))
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]
