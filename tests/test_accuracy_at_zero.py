"""Tests of analyzers/accuracy_at_zero.py.

An accuracy the run logs that never leaves zero (analyzers/accuracy_at_zero.py).

From two real cases in the corpus (tests/realworld/PROVENANCE.md): a GPT trained from scratch on a path task whose
printed `Acc` stayed at 0.00% for 342 epochs while its loss fell 8.7 -> 3.3 (22charlesduck/reversal, batch AR6), and
a RAG SFT whose eval_format_acc was 0 at all 18 evaluations (lilinwz/ProRAG). Both were called healthy with nothing
said. Silent: an accuracy that rose, an accuracy at 0 beside another measure of the same outputs that moved (an
OpenAI fine-tune's sequence accuracy next to its token accuracy), a reward named for accuracy, a log too short to
tell "not yet" from "never".
"""
from __future__ import annotations

import json

import numpy as np

import forensics
from forensics.analyzers.accuracy_at_zero import detect_accuracy_at_zero
from forensics.config import Thresholds


def _trainer_state(tmp_path, entries: list[dict]):
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text(json.dumps({"global_step": entries[-1]["step"], "log_history": entries}))
    return run


def _falling_loss(steps: int, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(2.4 * np.exp(-s / 150) + 0.9 + rng.normal(0, 0.04)) for s in range(1, steps + 1)]


def _run_with_eval_accuracy(tmp_path, accuracy) -> list[dict]:
    loss = _falling_loss(400)
    entries = [{"step": s, "epoch": s / 400, "loss": round(loss[s - 1], 4), "grad_norm": 0.8,
                "learning_rate": 2e-4 * (1 - s / 400)} for s in range(10, 401, 10)]
    for k, step in enumerate(range(50, 401, 50)):
        entries.append({"step": step, "epoch": step / 400, "eval_loss": round(1.6 - 0.05 * k, 4),
                        "eval_format_acc": accuracy(k)})
    return sorted(entries, key=lambda e: e["step"])


def test_an_eval_accuracy_at_zero_at_every_evaluation_is_a_warning(tmp_path):
    a = forensics.analyze(_trainer_state(tmp_path, _run_with_eval_accuracy(tmp_path, lambda k: 0.0)))
    assert a.status == "warning"
    (found,) = [f for f in a.findings if f.kind == "accuracy_at_zero"]
    assert (found.severity, found.step, found.end_step, found.metric) == ("warning", 50, 400, "eval_format_acc")
    assert "no example right" in found.message and "8 logged points" in found.message, found.message


def test_an_eval_accuracy_that_rose_is_silent_and_the_run_healthy(tmp_path):
    a = forensics.analyze(_trainer_state(tmp_path, _run_with_eval_accuracy(tmp_path, lambda k: 0.1 * k)))
    assert [f.kind for f in a.findings if f.kind == "accuracy_at_zero"] == []
    assert a.status == "healthy", [f.message for f in a.findings]


def test_an_accuracy_printed_at_zero_for_hundreds_of_points_while_the_loss_fell():
    steps = range(24, 8193, 24)
    loss = [3.3 + 5.4 * np.exp(-k / 8) for k in range(len(steps))]
    metrics = {"loss": _series(steps, loss), "accuracy": _series(steps, [0.0] * len(steps))}
    (found,) = detect_accuracy_at_zero(metrics, Thresholds())
    assert found.step == 24 and "while the loss went 8.7 -> 3.3" in found.message, found.message


def test_a_sequence_accuracy_at_zero_beside_a_token_accuracy_that_rose_is_silent():
    steps = range(1, 552)
    metrics = {"loss": _series(steps, [2.3 - s / 500 for s in steps]),
               "training_sequence_accuracy": _series(steps, [0.0] * len(steps)),
               "training_token_accuracy": _series(steps, [0.55 + s / 2000 for s in steps])}
    assert detect_accuracy_at_zero(metrics, Thresholds()) == []


def test_a_reward_named_for_accuracy_is_left_to_the_reward_detectors():
    steps = range(1, 60)
    metrics = {"loss": _series(steps, [0.0] * 59), "rewards/accuracy_reward": _series(steps, [0.0] * 59),
               "rewards/accuracies": _series(steps, [0.0] * 59)}
    assert detect_accuracy_at_zero(metrics, Thresholds()) == []


def test_four_points_at_zero_are_too_few_to_say_never():
    steps = [50, 100, 150, 200]
    metrics = {"loss": _series(steps, [2.0, 1.6, 1.4, 1.3]), "eval_accuracy": _series(steps, [0.0] * 4)}
    assert detect_accuracy_at_zero(metrics, Thresholds()) == []


def test_names_that_only_contain_the_letters_acc_are_not_accuracies():
    steps = range(1, 30)
    metrics = {"loss": _series(steps, [2.0 - s / 100 for s in steps]),
               "grad_accumulation_steps": _series(steps, [0.0] * 29), "accepted_tokens": _series(steps, [0.0] * 29)}
    assert detect_accuracy_at_zero(metrics, Thresholds()) == []


def _series(steps, values):
    import pandas as pd
    return pd.Series(list(values), index=list(steps), dtype="float64")


def test_a_training_accuracy_that_rose_does_not_excuse_an_eval_accuracy_at_zero():
    """A reviewer's case: the training accuracy 0.2 -> 0.95 while eval_accuracy was 0.0 at all 10 evaluations (TRL
    logs mean_token_accuracy on every SFT run, so a rising token accuracy would hide any held-out one at zero)."""
    steps = list(range(10, 101, 10))
    metrics = {"loss": _series(steps, [2.0 - s / 100 for s in steps]),
               "accuracy": _series(steps, [0.2 + 0.75 * s / 100 for s in steps]),
               "eval_accuracy": _series(steps, [0.0] * 10)}
    assert [f.metric for f in detect_accuracy_at_zero(metrics, Thresholds())] == ["eval_accuracy"]


def test_an_eval_sequence_accuracy_at_zero_beside_an_eval_token_accuracy_that_rose_is_silent():
    steps = list(range(10, 101, 10))
    metrics = {"eval_sequence_accuracy": _series(steps, [0.0] * 10),
               "eval_token_accuracy": _series(steps, [0.5 + s / 1000 for s in steps])}
    assert detect_accuracy_at_zero(metrics, Thresholds()) == []
