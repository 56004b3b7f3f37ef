"""Healthy real runs the tool doubted (day 10): an eval wobble in a single pass read as overfitting, a preference
run's two improving evaluations read as no evidence, a fine-tune whose log begins after most of its fall. Each test
builds a small log as the real program writes it and checks what its name says."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.overfitting import detect_overfitting
from forensics.config import Thresholds


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (2) a single pass over the data: a small eval set's late rise is not overfitting ------------------------------


def _from_scratch_dpo_console(folder, epoch_of, n=1061, every=5):
    """The training loop of Raschka's "LLMs from scratch" DPO chapter, as copied in notebooks: `Ep E (Step N): Train
    loss X, Val loss Y, Train reward margins M, Val reward margins V` every `every` steps. The training loss falls for
    the whole run; the val loss (a few fixed batches) reaches its lowest near step 915 and drifts up 15% after it."""
    lines = []
    for s in range(0, n, every):
        frac = s / n
        train = 0.12 + 0.57 * math.exp(-3 * frac) + 0.04 * math.sin(s * 0.37)
        val = (0.08 + 0.61 * math.exp(-4 * frac) if s <= 915 else 0.096 + 0.014 * (s - 915) / 145) \
            + 0.003 * math.sin(s * 0.91)
        lines.append(f"Ep {epoch_of(s)} (Step {s:06d}): Train loss {train:.3f}, Val loss {val:.3f}, "
                     f"Train reward margins {5 * frac:.3f}, Val reward margins {6 * frac:.3f}")
    lines.append("Training completed in 41.87 minutes.")
    (folder / "train.log").write_text("\n".join(lines) + "\n")


def test_an_ep_label_before_a_parenthesised_step_is_read_as_the_epoch(tmp_path):
    _from_scratch_dpo_console(tmp_path, lambda s: 1 if s < 530 else 2)
    epochs = _analyze(tmp_path).timeline.series("epoch").dropna()
    assert len(epochs) == 213 and epochs.nunique() == 2  # (the reader counts a loop's epochs from 0)


def test_a_small_eval_rising_in_a_single_pass_while_the_training_loss_keeps_falling_is_not_overfitting(tmp_path):
    _from_scratch_dpo_console(tmp_path, lambda s: 1)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "overfitting"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


def test_the_same_eval_rise_after_the_data_came_round_again_is_still_overfitting(tmp_path):
    _from_scratch_dpo_console(tmp_path, lambda s: 1 if s < 530 else 2)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "overfitting", [f.message for f in a.findings]


def _trainer_metrics(last_epoch: float, climb: float = 0.07) -> dict:
    """An HF Trainer history of 60 logged losses and 12 evals: the training loss falls throughout, the eval loss is
    lowest at the 8th evaluation and rises by `climb` at each of the four after it (20% in all by default); the epoch
    counter runs to `last_epoch`."""
    steps = list(range(10, 610, 10))
    loss = pd.Series([1.2 * math.exp(-s / 300) + 0.6 + 0.01 * math.sin(s) for s in steps], index=steps)
    eval_steps = list(range(50, 650, 50))
    evals = [1.6 - 0.05 * i for i in range(8)] + [1.25 + climb * i for i in range(1, 5)]
    epoch = pd.Series([last_epoch * s / 600 for s in steps], index=steps)
    return {"loss": loss, "eval_loss": pd.Series(evals, index=eval_steps), "epoch": epoch}


def test_an_eval_rise_of_a_few_hundredths_within_the_first_epoch_of_a_trainer_log_is_not_overfitting():
    # (1.25 -> 1.29: a small eval set's wobble; a larger rise in one pass still warns, test_review_day10_guard2)
    assert detect_overfitting(_trainer_metrics(last_epoch=0.98, climb=0.01), Thresholds()) == []
    assert [f.kind for f in detect_overfitting(_trainer_metrics(last_epoch=3.0, climb=0.01), Thresholds())] \
        == ["overfitting"]


def test_an_eval_rise_in_the_third_epoch_of_a_trainer_log_is_overfitting():
    found = detect_overfitting(_trainer_metrics(last_epoch=3.0), Thresholds())
    assert [f.kind for f in found] == ["overfitting"]


def test_an_eval_rise_where_the_epoch_counter_starts_over_each_pass_is_overfitting():
    """RapidFire trains its epochs as chunks, each printed with its own epoch 0-1: three passes, not one."""
    metrics = _trainer_metrics(last_epoch=3.0)
    metrics["epoch"] = pd.Series([(e * 3) % 1.0 or 1.0 for e in metrics["epoch"] / 3.0], index=metrics["epoch"].index)
    assert metrics["epoch"].max() <= 1.0
    found = detect_overfitting(metrics, Thresholds())
    assert [f.kind for f in found] == ["overfitting"]


def test_an_eval_rise_within_the_first_epoch_while_the_training_loss_rises_too_is_still_flagged():
    """In one pass a training loss on new batches that climbs with the eval loss is the model getting worse."""
    metrics = _trainer_metrics(last_epoch=0.98)
    loss = metrics["loss"]
    metrics["loss"] = loss.where(loss.index <= 400, loss + 0.002 * (loss.index - 400))
    assert [f.kind for f in detect_overfitting(metrics, Thresholds())] == ["overfitting"]


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


# ---- (1) a fine-tune whose first logged window holds most of its fall, then a plateau --------------------------------


def _sft_trainer_state(folder, first_loss, first_accuracy, every=10, n=47, seed=3):
    """A TRL SFTTrainer's trainer_state.json logging every `every` steps (each loss the mean over its window): the
    first window at `first_loss` / `first_accuracy`, then a plateau at 0.578 (noise 0.055 a window, as a batch of 8
    gives) with token accuracy 0.84 moving against it."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(n):
        noise = float(rng.normal(0, 0.055))
        loss = first_loss if i == 0 else 0.578 + noise
        accuracy = first_accuracy if i == 0 else 0.84 - 0.2 * noise
        log.append({"loss": round(loss, 4), "grad_norm": 0.45 + 0.05 * math.sin(i), "learning_rate": 2e-4 * (1 - i / n),
                    "entropy": 0.6, "mean_token_accuracy": round(accuracy, 4), "epoch": round(0.02 * (i + 1), 4),
                    "step": every * (i + 1)})
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": log, "global_step": every * n,
                                                           "max_steps": 500, "logging_steps": every}))


def test_a_first_window_well_above_a_plateau_with_the_token_accuracy_agreeing_is_evidence_of_learning(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.815)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"], [f.message for f in a.findings]
    assert a.status == "healthy" and a.learning is not None, [f.message for f in a.findings]


def test_a_first_window_within_the_plateau_noise_is_still_no_evidence_of_learning(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.66, first_accuracy=0.815)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]


def test_a_first_window_above_the_plateau_whose_token_accuracy_is_already_at_its_level_is_no_evidence(tmp_path):
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.84)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]


def test_a_first_step_above_a_plateau_logged_every_step_is_a_start_up_transient_not_evidence(tmp_path):
    """Logged every step, the first point is one batch on the weights as loaded, not the mean over a window."""
    _sft_trainer_state(tmp_path, first_loss=0.75, first_accuracy=0.815, every=1)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]
