"""Tests of analyzers/overfitting.py in a single pass over the data, and of the `Ep E (Step N)`
console lines the first cases are read from.

From the day-10 review of healthy real runs the tool doubted; each test builds a small log as the real program
writes it."""
from __future__ import annotations

import math
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
    # (1.25 -> 1.29: a small eval set's wobble; a larger rise in one pass still warns, test_overfitting_one_pass_eval)
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
