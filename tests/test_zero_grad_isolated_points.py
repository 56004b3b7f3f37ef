"""Tests of the zero-gradient rules: isolated zero grad norms with and without fp16.

From the day-7 judgements that were wrong on real runs: each test FAILS on the code before the change it targets;
each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from support.judged_logs import _kinds, _trainer_state


def _training_args_bin(folder, **kw):
    """training_args.bin as the Trainer saves it: torch.save of its TrainingArguments."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.save(transformers.TrainingArguments(output_dir=str(folder), report_to=[], **kw), folder / "training_args.bin")


def _learning_history(n=60, every=100, zero_at=(), tiny_at=(), start=2.0):
    """A full fine-tune logged every `every` steps: the loss falling from `start` to about 1.2 with per-step noise,
    grad_norm 2-4, exactly 0 at the points `zero_at` and 1e-9 at `tiny_at` (indices of the logged points)."""
    history = []
    for i in range(n):
        step = (i + 1) * every
        loss = 1.2 + (start - 1.2) * math.exp(-i / 8) + 0.05 * math.sin(i * 1.7)
        grad = 3.0 + math.sin(i * 0.9)
        if i in zero_at:
            grad = 0.0
        elif i in tiny_at:
            grad = 1e-9 * (1 + i % 3)
        history.append({"epoch": round(step / (n * every), 4), "grad_norm": grad,
                        "learning_rate": 5e-5 * (1 - i / n), "loss": round(loss, 4), "step": step})
    return history


# 1. grad_norm exactly 0 (or vanishingly small) at isolated steps: skipped by a loss scaler only where the run shows one

def test_isolated_zero_grad_norms_without_fp16_are_no_learning_signal(tmp_path):
    """grad_norm exactly 0 at isolated logged steps and 1e-9 at others, an ordinary loss there, and nothing in the run
    that says fp16 (no loss scale, no overflow, no fp16 flag): those batches gave no gradient (every label masked), a
    `no_learning_signal` warning dated at the first such point, the vanishingly small ones included. Before: the exact
    zeros were `skipped_steps` ('check the fp16 / DeepSpeed overflow messages') and the 1e-9s were not seen."""
    run = _trainer_state(tmp_path / "run", _learning_history(zero_at=(20, 33, 41, 50), tiny_at=(5, 27)))
    a = forensics.analyze(run)
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_signal", 600)
    assert "skipped_steps" not in _kinds(a)
    signal = next(f for f in a.findings if f.kind == "no_learning_signal")
    assert signal.evidence["zero_steps"] == [2100, 3400, 4200, 5100]
    assert signal.evidence["vanishing_steps"] == [600, 2800]
    assert "fp16 / DeepSpeed overflow" not in signal.message
    assert any(c.cause == "zero_loss_zero_grad" and "isolated" in c.evidence[0] for c in a.causes)


def test_isolated_zero_grad_norms_of_an_fp16_run_stay_skipped_steps(tmp_path):
    """The same log with training_args.bin saying fp16 (a loss scaler ran, that reports a skipped step as 0): still the
    scaler's `skipped_steps`, from the first exact 0."""
    run = _trainer_state(tmp_path / "run", _learning_history(zero_at=(20, 33, 41, 50)))
    _training_args_bin(run, fp16=True, learning_rate=5e-5)
    a = forensics.analyze(run)
    assert a.run_profile.precision == "fp16"
    assert (a.first_incident.kind, a.first_incident.step) == ("skipped_steps", 2100)
    assert "no_learning_signal" not in _kinds(a)


def test_a_healthy_run_with_small_grad_norms_has_no_gradient_finding(tmp_path):
    """A run that learned with grad_norm between 0.3 and 4 (heavy-tailed, never 0 nor vanishing): no zero-gradient
    finding of either kind, healthy."""
    history = _learning_history()
    for i, h in enumerate(history):
        h["grad_norm"] = 0.3 if i % 9 == 4 else h["grad_norm"]
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert a.status == "healthy", [(f.kind, f.step) for f in a.findings]
    assert not {"no_learning_signal", "skipped_steps"} & _kinds(a)


# 2. How many: a few batches without gradient in a long log are a note, not a warning (Cosmox999_gpt2-next-word-
# prediction, AS109: 4 of 367 logged points, judged healthy; ashish1932_Chatbot's 8 of 75 and wstern1234_wee_model's
# 15 of 180, judged warnings)

def test_a_few_isolated_zero_grad_norms_in_a_long_log_are_an_info_and_no_cause(tmp_path):
    """grad_norm exactly 0 at 4 of 400 logged points of a run that learned: the sample shows at most about 2% of the
    batches without gradient (under one in twenty), a fraction of the compute and nothing of the end model: an info
    `no_learning_signal` that says the share, the run healthy and given no cause."""
    run = _trainer_state(tmp_path / "run", _learning_history(n=400, zero_at=(46, 119, 138, 158)))
    a = forensics.analyze(run)
    signal = next(f for f in a.findings if f.kind == "no_learning_signal")
    assert signal.severity == "info"
    assert "4 of the 400 logged steps" in signal.message
    assert a.status == "healthy", [(f.kind, f.severity) for f in a.findings]
    assert a.causes == []


@pytest.mark.parametrize("n, zero_at", [(40, (17,)), (60, (20, 33, 41, 50))])
def test_zero_grad_norms_a_log_cannot_show_to_be_few_stay_a_warning(tmp_path, n, zero_at):
    """One zero in 40 logged points (2.5%, but a sample that small allows one batch in ten) and four in 60 (6.7%): the
    log does not show the batches without gradient to be under one in twenty, so the warning stands."""
    a = forensics.analyze(_trainer_state(tmp_path / "run", _learning_history(n=n, zero_at=zero_at)))
    assert (a.first_incident.kind, a.first_incident.severity) == ("no_learning_signal", "warning")


@pytest.mark.parametrize("case, status", [("Cosmox999_gpt2-next-word-prediction", "healthy"),
                                          ("ashish1932_Chatbot", "warning"), ("wstern1234_wee_model", "warning")])
def test_the_corpus_cases_of_isolated_zero_grad_norms_are_judged_by_their_share(case, status):
    a = forensics.analyze(Path(__file__).parent / "realworld" / case)
    assert a.status == status
    assert any(f.kind == "no_learning_signal" for f in a.findings)
