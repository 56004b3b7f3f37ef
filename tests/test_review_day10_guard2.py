"""Learning and overfitting rules that called unlearned or overfitting runs fine (day 10, guard pass two): each test
builds a small HF Trainer `trainer_state.json` the way the reviewer built it and checks what its name says, beside a
run of the same shape that each rule was made for and must still let through."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

import forensics


def _write_state(folder, log, **state):
    """An HF Trainer trainer_state.json: its log_history and global_step, with `max_steps` and any other field."""
    last = max(r["step"] for r in log)
    body = {"log_history": log, "global_step": last, "max_steps": state.pop("max_steps", last), **state}
    (folder / "trainer_state.json").write_text(json.dumps(body, indent=1))


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _kinds(analysis) -> list[str]:
    return [f.kind for f in analysis.findings]


# ---- (1) one pass over the data: an eval rise the size of a small eval set's wobble is no overfitting, a large one is


def _one_epoch_sft(folder, evals: dict[int, float], seed=6, steps=1000):
    """HF SFT, num_train_epochs=1 (the epoch counter ends at 1.0), logging every 10 steps with grad_norm 1.0, an eval
    at the steps of `evals`; the training loss falls 1.7 -> 0.9 and stays there."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(steps // 10):
        step = 10 * (i + 1)
        loss = 0.9 + 0.8 * math.exp(-i / 15) + 0.02 * rng.standard_normal()
        log.append({"step": step, "epoch": round(step / steps, 4), "loss": round(loss, 4),
                    "learning_rate": 2e-5 * (1 - step / steps), "grad_norm": 1.0})
        if step in evals:
            log.append({"step": step, "epoch": round(step / steps, 4), "eval_loss": evals[step]})
    _write_state(folder, log, max_steps=steps, num_train_epochs=1)


def test_a_one_pass_eval_loss_that_nearly_doubles_while_the_training_loss_falls_is_still_a_warning(tmp_path):
    # eval loss best 1.00 at step 300, then 1.05, 1.15, ... 1.9 while the training loss keeps falling
    evals = {100: 1.2, 200: 1.05, 300: 1.0, 400: 1.05, 500: 1.15, 600: 1.3, 700: 1.45, 800: 1.6, 900: 1.75, 1000: 1.9}
    _one_epoch_sft(tmp_path, evals)
    a = _analyze(tmp_path)
    assert a.status == "warning", [f.message for f in a.findings]
    assert {"overfitting", "train_eval_mismatch"} & set(_kinds(a)), [f.message for f in a.findings]


def test_a_one_pass_eval_loss_wobbling_up_three_hundredths_while_the_training_loss_falls_is_no_overfitting(tmp_path):
    # a small eval set every 20 steps: falling 1.6 -> 1.000 by step 600, then up by two or three hundredths
    evals = {s: round(1.0 + 0.6 * math.exp(-(s - 20) / 120), 3) for s in range(20, 620, 20)}
    evals.update({s: round(1.03 + 0.006 * math.sin(s), 3) for s in range(620, 1020, 20)})
    _one_epoch_sft(tmp_path, evals)
    a = _analyze(tmp_path)
    assert "overfitting" not in _kinds(a), [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


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


# ---- (3) the first window: a hard first batch over a flat log, a resumed log's first window, a weak one-point test


def _flat_logs():
    """The reviewer's two flat logs of 40 windows (1.50, noise 1.3% a window, the first window 0.065 up): a resumed
    run's (from step 1010) and a fresh one's at LR 1e-8 (from step 10), drawn in that order."""
    rng = np.random.default_rng(3)
    drawn = [[1.5 * (1 + 0.013 * rng.standard_normal()) + (0.065 if i == 0 else 0) for i in range(40)] for _ in "rf"]
    return drawn[0], drawn[1]


def _flat_state(folder, losses, first_step, learning_rate):
    log = [{"step": first_step + 10 * i, "epoch": round((first_step + 10 * i) / 2000, 4), "loss": round(loss, 4),
            "learning_rate": learning_rate} for i, loss in enumerate(losses)]
    _write_state(folder, log, max_steps=first_step + 390)


def test_a_flat_run_whose_first_window_is_four_percent_up_has_no_evidence_it_learned(tmp_path):
    _flat_state(tmp_path, _flat_logs()[1], first_step=10, learning_rate=1e-8)
    a = _analyze(tmp_path)
    assert a.status == "warning" and "no_learning_evidence" in _kinds(a), [f.message for f in a.findings]


def test_a_resumed_log_whose_first_window_stands_up_has_no_run_start_to_show_learning(tmp_path):
    _flat_state(tmp_path, _flat_logs()[1], first_step=1010, learning_rate=1e-4)
    a = _analyze(tmp_path)
    assert a.status == "warning" and "no_learning_evidence" in _kinds(a), [f.message for f in a.findings]


def _plateau_with_first_window(first_loss, n=40, seed=11):
    """A log of `n` 10-step windows: the first at `first_loss`, then a plateau at 0.578 with a noise of 0.055."""
    rng = np.random.default_rng(seed)
    steps = [10 * (i + 1) for i in range(n)]
    values = [first_loss] + [0.578 + 0.055 * float(rng.standard_normal()) for _ in range(n - 1)]
    return pd.Series(values, index=steps)


def test_a_first_window_under_three_noise_units_over_a_plateau_is_within_chance():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.analyzers.metrics import point_noise
    from forensics.config import Thresholds

    loss = _plateau_with_first_window(0.72)
    noise = point_noise(loss.to_numpy())
    assert 2.5 <= (0.72 - float(loss.iloc[1:].median())) / noise < 3  # (one flat run in 50-80 stands this far up)
    assert fell_in_the_first_window({"loss": loss}, loss, Thresholds()) is None


def test_a_first_window_five_percent_over_a_quiet_plateau_is_a_hard_first_batch_not_learning():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    rng = np.random.default_rng(12)
    loss = pd.Series([1.575] + [1.5 + 0.004 * float(rng.standard_normal()) for _ in range(39)],
                     index=range(10, 410, 10))  # (the first window about 15 noise units up, 5% over the rest)
    assert fell_in_the_first_window({"loss": loss}, loss, Thresholds()) is None


def test_a_first_window_far_over_a_plateau_in_a_log_that_begins_mid_run_is_no_fall_from_the_start():
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    from_start = _plateau_with_first_window(0.95)
    resumed = pd.Series(from_start.to_numpy(), index=from_start.index + 1000)  # (a resume from checkpoint-1000)
    assert fell_in_the_first_window({"loss": from_start}, from_start, Thresholds()) is not None
    assert fell_in_the_first_window({"loss": resumed}, resumed, Thresholds()) is None


def test_a_first_window_far_over_a_plateau_is_a_fall_within_it(tmp_path):
    log = [{"step": int(s), "epoch": round(s / 2000, 4), "loss": round(v, 4), "learning_rate": 2e-4}
           for s, v in _plateau_with_first_window(0.95).items()]
    _write_state(tmp_path, log, max_steps=400)
    a = _analyze(tmp_path)
    assert "no_learning_evidence" not in _kinds(a), [f.message for f in a.findings]
    assert a.status == "healthy" and a.learning is not None, [f.message for f in a.findings]


# ---- (4) a token accuracy logged twice, or smooth, that rose agrees with the fall; one that did not rise does not


def _first_window_fall_with_accuracy(accuracy: pd.Series):
    from forensics.analyzers.secondary_evidence import fell_in_the_first_window
    from forensics.config import Thresholds

    loss = _plateau_with_first_window(0.95)
    return fell_in_the_first_window({"loss": loss, "mean_token_accuracy": accuracy}, loss, Thresholds())


def test_a_token_accuracy_logged_twice_that_rose_agrees_with_the_first_window_fall():
    assert _first_window_fall_with_accuracy(pd.Series([0.80, 0.84], index=[10, 400])) is not None


def test_a_smooth_token_accuracy_that_rose_agrees_with_the_first_window_fall():
    assert _first_window_fall_with_accuracy(pd.Series([0.80] + [0.84] * 39, index=range(10, 410, 10))) is not None


def test_a_token_accuracy_logged_twice_that_fell_does_not_agree():
    assert _first_window_fall_with_accuracy(pd.Series([0.84, 0.80], index=[10, 400])) is None
