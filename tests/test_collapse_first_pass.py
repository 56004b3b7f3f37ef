"""A whole-sequence loss that reaches ~0 on data seen once: a `loss_collapse`, broken where it ends at the floor of a
4-decimal print, a warning where it stays small above it; runs that learned, memorized over several epochs, or log
a preference or RL loss stay as they were. Runs built as metric Series the way the Trainer logs them (a loss and an
epoch at each logged step, no grad_norm, no eval)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.collapse import detect_loss_collapse
from forensics.analyzers.zero_in_first_epoch import for_a_language_model
from forensics.config import Thresholds
from forensics.ingest import stdout

TH = Thresholds()


def _run(loss: list[float], steps_an_epoch: float, every: int = 1, **more: list[float]) -> dict[str, pd.Series]:
    steps = np.arange(1, len(loss) + 1) * every
    metrics = {"loss": pd.Series(loss, index=steps, dtype="float64"),
               "epoch": pd.Series(steps / steps_an_epoch, index=steps, dtype="float64")}
    metrics.update({name: pd.Series(values, index=steps, dtype="float64") for name, values in more.items()})
    return metrics


def _descent(start: float, end: float, points: int, rng: np.random.Generator, noise: float = 0.2) -> list[float]:
    """A loss falling from `start` to `end` geometrically, with per-batch noise, rounded as a 4-decimal print."""
    level = np.geomspace(start, max(end, 1e-6), points) * np.exp(rng.normal(0, noise, points))
    return list(np.round(np.where(level < 5e-5, 0.0, level), 4))


def _judged_as_language_model(metrics) -> list:
    return for_a_language_model(detect_loss_collapse(metrics, TH), metrics, TH)


def _collapse(findings):
    return next((f for f in findings if f.kind == "loss_collapse"), None)


def test_a_loss_at_zero_to_the_end_within_a_cut_short_first_pass_is_a_broken_collapse():
    # 60 steps of 8 over 100,000 examples (max_steps: epoch 0.0048 at the end); 0.29 -> 0.0 by step 25 and 0.0 after
    rng = np.random.default_rng(0)
    loss = _descent(0.29, 0.0004, 20, rng) + [0.0] * 40
    metrics = _run(loss, steps_an_epoch=12500)
    found = _collapse(_judged_as_language_model(metrics))
    assert found is not None and found.severity == "error"
    assert 10 <= found.step <= 30
    assert not any(f.kind == "zero_loss_unexplained" for f in _judged_as_language_model(metrics))


def test_a_loss_settling_small_but_above_zero_in_its_first_pass_is_a_warning_collapse():
    # 30 steps over 3,346 examples (7% of a pass): 0.66 -> 0.048 in six steps, 0.002-0.005 at the end
    loss = [0.6597, 0.6089, 0.5809, 0.4515, 0.134, 0.048, 0.0341, 0.0338, 0.028, 0.0246, 0.0293, 0.0235, 0.021,
            0.0201, 0.0201, 0.019, 0.0175, 0.0162, 0.0158, 0.0156, 0.012, 0.0105, 0.0087, 0.0054, 0.0064, 0.0039,
            0.0036, 0.0028, 0.002, 0.0051]
    metrics = _run(loss, steps_an_epoch=418)
    assert detect_loss_collapse(metrics, TH) == []  # the log alone: a loss under 1 nat may be no language model's
    found = _collapse(_judged_as_language_model(metrics))
    assert found is not None and found.severity == "warning"
    assert 3 <= found.step <= 9


def test_the_same_small_loss_with_a_live_grad_norm_stays_silent():
    # a regular target learned: 1.8 -> 0.0035 within a third of its first of two passes, grad_norm 0.1-0.4 throughout
    rng = np.random.default_rng(7)
    loss = _descent(1.8, 0.004, 60, rng, noise=0.15) + list(np.round(0.0035 * np.exp(rng.normal(0, 0.4, 340)), 4))
    grad = list(np.round(np.geomspace(6.6, 0.2, 400) * np.exp(rng.normal(0, 0.3, 400)), 4))
    metrics = _run(loss, steps_an_epoch=1000, every=5, grad_norm=grad)
    assert _collapse(_judged_as_language_model(metrics)) is None


def test_a_language_model_loss_from_nats_collapsing_in_its_first_pass_is_a_collapse_without_the_profile():
    # a summariser from 9.2 nats (a fresh head over 32k tokens) to 0.0004 within a sixth of its first of two epochs
    rng = np.random.default_rng(1)
    loss = [9.2] * 5 + _descent(9.0, 0.001, 300, rng) + list(np.round(np.full(1500, 0.0004) *
                                                                    np.exp(rng.normal(0, 0.3, 1500)), 4))
    metrics = _run(loss, steps_an_epoch=9025, every=10)
    found = _collapse(detect_loss_collapse(metrics, TH))
    assert found is not None and found.severity == "warning"
    assert found.evidence["epoch"] < 1.0


def test_a_fine_tune_falling_to_half_a_nat_in_its_first_epoch_stays_silent():
    rng = np.random.default_rng(2)
    metrics = _run(_descent(2.1, 0.45, 200, rng, noise=0.1), steps_an_epoch=250)
    assert _collapse(_judged_as_language_model(metrics)) is None


def test_a_loss_reaching_zero_in_its_third_epoch_stays_memorization():
    # 100 steps an epoch: at 0.3 through the first, under 0.01 only from the third pass
    rng = np.random.default_rng(3)
    loss = _descent(1.5, 0.3, 100, rng, noise=0.1) + _descent(0.3, 0.02, 100, rng, noise=0.1) \
        + _descent(0.02, 0.0001, 100, rng, noise=0.1)
    findings = _judged_as_language_model(_run(loss, steps_an_epoch=100))
    assert _collapse(findings) is None
    assert any(f.kind == "memorization" for f in findings)


def test_a_grpo_loss_near_zero_stays_silent():
    rng = np.random.default_rng(4)
    loss = list(np.round(rng.normal(0, 0.002, 200), 4))
    reward = list(np.linspace(0.2, 1.4, 200))
    metrics = _run(loss, steps_an_epoch=1000, reward=reward, kl=list(np.linspace(0, 0.05, 200)),
                   **{"rewards/correctness_reward_func": reward})
    assert _collapse(_judged_as_language_model(metrics)) is None


def test_a_dpo_loss_falling_under_a_tenth_stays_silent():
    rng = np.random.default_rng(5)
    loss = _descent(0.6931, 0.05, 150, rng, noise=0.15)
    margins = list(np.linspace(0.0, 6.0, 150))
    metrics = _run(loss, steps_an_epoch=400, **{"rewards/margins": margins, "rewards/accuracies": [0.9] * 150})
    assert _collapse(_judged_as_language_model(metrics)) is None


def test_an_epoch_counter_ending_at_one_may_be_a_stream_and_is_not_trusted():
    # a streaming run's epoch is step / max_steps, 1.0 at its end, whatever examples came round again
    rng = np.random.default_rng(6)
    metrics = _run(_descent(0.29, 0.0004, 20, rng) + [0.0] * 40, steps_an_epoch=60)
    assert _collapse(_judged_as_language_model(metrics)) is None


def test_a_fall_straight_to_an_exact_zero_stays_unexplained():
    # 0.47 then exactly 0.0 from the next point, no grad_norm: a masked NaN reads the same (VERDICTS.md)
    metrics = _run([0.47, 0.45, 0.46, 0.44] + [0.0] * 30, steps_an_epoch=5000)
    findings = _judged_as_language_model(metrics)
    assert _collapse(findings) is None
    assert any(f.kind == "zero_loss_unexplained" for f in findings)


# --- the epochs of a notebook's results table, where its progress line printed the whole epochs done --------------

_BANNER = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
           "   \\\\   /|    Num examples = 241 | Num Epochs = 2 | Total steps = 60\n"
           "O^O/ \\_/ \\    Batch size per device = 2 | Gradient accumulation steps = 4\n"
           "\\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8\n")


def _table_epochs(tmp_path, progress: str) -> pd.Series:
    rows = "".join(f"{step}\t{0.2 / step:.6f}\n" for step in range(1, 61))
    path = tmp_path / "train.log"
    path.write_text(_BANNER + progress + "\nStep\tTraining Loss\n" + rows)
    frame = stdout.read(path).frame
    epochs = frame[frame["metric"] == "epoch"]
    return pd.Series(epochs["value"].to_numpy(), index=epochs["step"].to_numpy())


def test_a_progress_line_printing_the_whole_epochs_done_gives_way_to_the_banners_steps_an_epoch(tmp_path):
    # `[60/60, Epoch 1/2]`: int(state.epoch) of 1.99 at the end; the banner's 30 steps an epoch put step 13 at 0.43
    epochs = _table_epochs(tmp_path, "[60/60 03:10, Epoch 1/2]")
    assert epochs[60] == 2.0 and abs(epochs[13] - 13 / 30) < 1e-9


def test_a_progress_line_whose_epochs_differ_from_the_banners_keeps_its_own_pace(tmp_path):
    # three epochs done at step 60 where the banner plans two: the two disagree on the whole epochs, so the banner's
    # 30 steps an epoch are not taken over the progress line's 20
    epochs = _table_epochs(tmp_path, "[60/60 03:10, Epoch 3/3]")
    assert epochs[60] == 3.0 and abs(epochs[20] - 1.0) < 1e-9


def _three_prints(*losses: float) -> dict[str, pd.Series]:
    return {"loss": pd.Series(list(losses), index=[1, 2, 3], dtype="float64")}


def test_a_three_print_launch_cut_after_falling_to_zero_is_a_collapse():
    """shresthakamal's DialoGPT loop (AS39): 5.59, 1.5e-9, 0.0, then the launch was cut - two near-zero points, fewer
    than `collapse_points`, but every point after the first: a collapse (it read healthy, with no finding at all)."""
    (found,) = detect_loss_collapse(_three_prints(5.59, 1.5e-9, 0.0), Thresholds())
    assert (found.kind, found.step, found.severity) == ("loss_collapse", 2, "error")


def test_three_prints_with_one_near_zero_or_a_longer_log_with_two_stay_silent():
    assert detect_loss_collapse(_three_prints(5.59, 2.1, 0.0), Thresholds()) == []
    four = {"loss": pd.Series([5.59, 3.1, 1e-9, 0.0], index=[1, 2, 3, 4], dtype="float64")}
    assert detect_loss_collapse(four, Thresholds()) == []
