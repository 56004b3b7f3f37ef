"""The metric analyzers: every detector firing and silent, the chain, the verdict.

Series are built the way runs log them (seeded noise around a decaying loss, HF logging every N
steps, eval entries at their own steps) with incidents planted at known steps; the expected
step and numbers come from where and how they were planted.
"""
import math

import numpy as np
import pandas as pd
import pytest

from forensics.analyzers import ERROR_IN_ITS_ATTEMPT, analyze_metrics, first_incident_of, run_all, status_of
from forensics.analyzers.collapse import detect_loss_collapse
from forensics.analyzers.divergence import detect_divergence
from forensics.analyzers.grad_spike import detect_grad_norm_spikes
from forensics.analyzers.loss_spike import detect_loss_spikes
from forensics.analyzers.masked_nan import detect_masked_nan_loss
from forensics.analyzers.metrics import format_number, lr_restart_steps, metrics_from_rows
from forensics.analyzers.nonfinite import detect_nonfinite_metrics
from forensics.analyzers.overflow import detect_loss_scale_overflow
from forensics.analyzers.skipped_steps import detect_skipped_steps, lr_stalled
from forensics.config import Thresholds
from forensics.findings import Finding
from forensics.timeline import LogRecords, build_timeline

TH = Thresholds()
NAN = math.nan




def steps(n: int, every: int = 1) -> np.ndarray:
    """Logging steps every, 2*every, ... (HF logs at global_step % logging_steps == 0)."""
    return np.arange(1, n + 1, dtype="int64") * every


def decaying_loss(n: int, seed: int, start: float = 2.5, end: float = 0.8, tau: float = 80.0,
                  noise: float = 0.04) -> np.ndarray:
    """end + (start - end) * exp(-i / tau), times lognormal batch noise of relative size `noise`."""
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    return (end + (start - end) * np.exp(-i / tau)) * np.exp(rng.normal(0.0, noise, n))


def noisy_grad_norm(n: int, seed: int, level: float = 1.0, sigma: float = 0.3) -> np.ndarray:
    """A healthy grad_norm: `level` times lognormal noise (sigma in log space)."""
    rng = np.random.default_rng(seed)
    return level * np.exp(rng.normal(0.0, sigma, n))


def linear_lr(n: int, peak: float = 2e-4, warmup: int = 5) -> np.ndarray:
    """Linear warm-up to `peak` over `warmup` points, then linear decay to 0 (HF 'linear')."""
    i = np.arange(1, n + 1, dtype="float64")
    up = peak * i / warmup
    down = peak * (n - i) / max(n - warmup, 1)
    return np.where(i <= warmup, up, down)


def metrics(step_index: np.ndarray, **series) -> dict[str, pd.Series]:
    """{name: Series(values, index=steps)} over one set of logging steps."""
    return {name: pd.Series(np.asarray(v, dtype="float64"), index=step_index, name=name) for name, v in series.items()}


def long_rows(metric_map: dict[str, pd.Series]) -> pd.DataFrame:
    """Metrics -> the (step, metric, value, wall_time) frame an ingestor returns."""
    parts = [pd.DataFrame({"step": s.index.to_numpy(dtype="int64"), "metric": name,
                           "value": s.to_numpy(dtype="float64")}) for name, s in metric_map.items()]
    frame = pd.concat(parts, ignore_index=True).sort_values("step", kind="stable").reset_index(drop=True)
    frame["wall_time"] = np.nan
    return frame


def in_file_order(*frames: pd.DataFrame) -> pd.DataFrame:
    """Train and eval rows as one log_history holds them: by step, train entry before eval entry."""
    return pd.concat(frames, ignore_index=True).sort_values("step", kind="stable").reset_index(drop=True)


def healthy(n: int, seed: int, every: int = 10) -> dict[str, pd.Series]:
    st = steps(n, every)
    return metrics(st, loss=decaying_loss(n, seed), grad_norm=noisy_grad_norm(n, seed + 100),
                   learning_rate=linear_lr(n))


def kinds(findings: list[Finding]) -> list[str]:
    return [f.kind for f in findings]


# ---------------------------------------------------------------- healthy runs: silence

@pytest.mark.parametrize("seed", range(8))
def test_a_noisy_healthy_run_gives_no_finding_at_all(seed):
    assert analyze_metrics(healthy(400, seed), TH) == []


@pytest.mark.parametrize("seed", range(6))
def test_a_noisy_but_stable_grad_norm_is_not_a_spike_storm(seed):
    n = 3000
    st = steps(n)
    # heavier noise than a real per-step grad_norm, on a slow downward drift
    grad = noisy_grad_norm(n, seed, sigma=0.35) * np.linspace(3.0, 1.0, n)
    assert detect_grad_norm_spikes(metrics(st, grad_norm=grad), TH) == []


@pytest.mark.parametrize("seed", range(6))
def test_per_step_batch_noise_on_the_loss_is_not_a_loss_spike(seed):
    n = 3000
    m = metrics(steps(n), loss=decaying_loss(n, seed, noise=0.12, tau=600))
    assert detect_loss_spikes(m, TH) == []
    assert detect_divergence(m, TH) == []


# ---------------------------------------------------------------- non-finite metrics

def test_nan_grad_norm_that_never_recovers_is_an_error_from_the_planted_step():
    n, nan_at = 60, 41
    st = steps(n, 10)
    grad = noisy_grad_norm(n, 1)
    grad[nan_at:] = NAN
    found = detect_nonfinite_metrics(metrics(st, loss=decaying_loss(n, 1), grad_norm=grad), TH)
    assert len(found) == 1
    f = found[0]
    assert (f.kind, f.severity, f.metric, f.step) == ("nonfinite_metric", "error", "grad_norm", st[nan_at])
    assert f.evidence["last_finite"] == grad[nan_at - 1]
    assert f.evidence["last_finite_step"] == st[nan_at - 1]
    assert f.evidence["n_nonfinite"] == n - nan_at
    assert f.message == (f"grad_norm is NaN from step {st[nan_at]} on "
                         f"(last finite {format_number(grad[nan_at - 1])} at step {st[nan_at - 1]}).")


def test_a_nonfinite_loss_that_comes_back_is_a_warning_with_its_recovery_step():
    n, bad = 80, 30
    st = steps(n, 5)
    loss = decaying_loss(n, 2)
    loss[bad] = math.inf
    found = detect_nonfinite_metrics(metrics(st, loss=loss, grad_norm=noisy_grad_norm(n, 2)), TH)
    assert [(f.metric, f.severity, f.step) for f in found] == [("loss", "warning", st[bad])]
    assert found[0].evidence["recovered_at"] == st[bad + 1]
    assert found[0].evidence["value"] == math.inf


def test_eval_entries_at_their_own_steps_are_not_read_as_nan_gaps():
    # train logs every 10 steps, eval every 25: the wide view has NaN loss at 25, 75, ...
    n = 30
    train = metrics(steps(n, 10), loss=decaying_loss(n, 3), grad_norm=noisy_grad_norm(n, 3))
    eval_steps = np.arange(25, 301, 25)
    evals = metrics(eval_steps, eval_loss=decaying_loss(len(eval_steps), 4, end=1.0))
    rows = in_file_order(long_rows(train), long_rows(evals))
    timeline = build_timeline([LogRecords("trainer_state.json", "trainer_state", rows, mtime=0.0)])
    assert timeline.wide()["loss"].isna().any()  # the trap: gaps are NaN in the wide view
    assert run_all(timeline, TH) == []


def test_evaluation_entries_after_the_training_ones_in_one_log_history_are_no_relaunch():
    """A log_history whose eval entries (epoch beside eval_loss) come after all the training entries is one run out of
    step order: its training loss stands whole. A relaunch in the same file logs its loss again and still replaces
    the earlier attempt from its first step on."""
    n = 22
    st = steps(n, 10)
    train = long_rows(metrics(st, loss=decaying_loss(n, 7), grad_norm=noisy_grad_norm(n, 7), epoch=st / 224))
    eval_steps = np.array([50, 100, 150, 200])
    evals = long_rows(metrics(eval_steps, eval_loss=decaying_loss(4, 8, end=1.0), epoch=eval_steps / 224))
    timeline = build_timeline([LogRecords("trainer_state.json", "trainer_state", pd.concat([train, evals],
                                                                                             ignore_index=True))])
    assert not timeline.abandoned().size and len(timeline.series("loss")) == n
    relaunch = long_rows(metrics(st[:5], loss=decaying_loss(5, 9), grad_norm=noisy_grad_norm(5, 9), epoch=st[:5] / 224))
    timeline = build_timeline([LogRecords("train.log", "stdout", pd.concat([train, relaunch], ignore_index=True))])
    assert set(timeline.abandoned()["step"]) == set(st)


def test_eval_loss_nan_is_found_at_the_first_eval_that_went_nan():
    eval_steps = np.arange(50, 501, 50)
    values = decaying_loss(len(eval_steps), 5)
    values[6:] = NAN  # eval at step 350 on
    found = detect_nonfinite_metrics(metrics(eval_steps, eval_loss=values), TH)
    assert [(f.metric, f.step, f.severity) for f in found] == [("eval_loss", 350, "error")]


# ---------------------------------------------------------------- masked NaN, zero loss, memorization

def hf_nan_run(n: int, nan_at: int, every: int = 5, seed: int = 7) -> tuple[np.ndarray, dict[str, pd.Series]]:
    """HF logging after a NaN from position nan_at: the window it starts in still averages finite
    losses, every later window is all NaN so the filter logs 0.0 (alternating -0.0 to check zero)."""
    st = steps(n, every)
    loss, grad = decaying_loss(n, seed), noisy_grad_norm(n, seed)
    grad[nan_at:] = NAN
    loss[nan_at + 1:] = [0.0 if i % 2 else -0.0 for i in range(n - nan_at - 1)]
    return st, metrics(st, loss=loss, grad_norm=grad, learning_rate=linear_lr(n))


def test_loss_zero_next_to_nan_grad_norm_is_a_masked_nan_to_the_end():
    st, m = hf_nan_run(60, 20)
    found = detect_masked_nan_loss(m, TH)
    assert len(found) == 1
    f = found[0]
    assert (f.kind, f.severity, f.step, f.end_step) == ("masked_nan_loss", "error", st[21], st[-1])
    assert f.evidence["n_points"] == 60 - 21
    assert f.evidence["last_real_loss_step"] == st[20]  # the partial window's finite average


def test_masked_nan_that_ends_is_a_warning():
    st, m = hf_nan_run(60, 20)
    m["loss"].iloc[40:] = 0.5
    m["grad_norm"].iloc[40:] = 1.0
    found = detect_masked_nan_loss(m, TH)
    assert [(f.severity, f.step, f.end_step) for f in found] == [("warning", st[21], st[39])]


def test_zero_loss_with_zero_grad_norm_is_no_learning_signal_not_a_masked_nan():
    n = 50
    st = steps(n, 10)
    m = metrics(st, loss=np.zeros(n), grad_norm=np.zeros(n), learning_rate=linear_lr(n))
    assert detect_masked_nan_loss(m, TH) == []
    found = detect_loss_collapse(m, TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("no_learning_signal", "error", st[0])]


def test_a_rounded_tiny_loss_on_a_small_dataset_is_memorization_not_nan():
    n = 70
    st = steps(n)
    i = np.arange(n)
    loss = np.round(2.0 * np.exp(-i / 5.0), 4)  # a 4.x Trainer rounds to 4 decimals: reaches 0.0
    grad = 0.5 * np.exp(-i / 20.0)
    m = metrics(st, loss=loss, grad_norm=grad, learning_rate=linear_lr(n))
    assert (loss == 0.0).any()
    first_low = int(np.argmax(loss <= TH.collapse_abs))
    found = analyze_metrics(m, TH)
    # VERDICTS.md: memorization is a warning (someone should look at the eval loss), never an error.
    assert [(f.kind, f.severity) for f in found] == [("memorization", "warning")]
    # dated from where the descent came half its way down on a log scale, or later where it settled under 1.5x the
    # memorization level (here 0.03 < halfway 0.045), the first near-zero step kept
    halfway = math.sqrt(loss[0] * max(loss[first_low], 1e-4))
    settled = int(np.argmax(loss <= min(halfway, 1.5 * TH.memorization_level)))
    assert found[0].step == st[settled] < st[first_low] == found[0].evidence["near_zero_step"]
    assert found[0].end_step == st[-1]  # it lasts to the end of the log
    assert status_of(found) == "warning"


def test_train_loss_that_holds_more_than_the_logged_windows_tells_tiny_real_losses_from_a_hidden_nan():
    st = steps(100, 10)
    loss = np.zeros(100)
    loss[0] = 0.0328
    real = metrics(st, loss=loss)
    real["train_loss"] = pd.Series({1000: (0.328 + 0.0012) / 1000})
    (f,) = detect_loss_collapse(real, TH)
    assert f.kind == "memorization" and f.evidence["unlogged_loss"] == pytest.approx(0.0012, abs=1e-9)
    hidden = dict(real, train_loss=pd.Series({1000: 0.328 / 1000}))  # the 0.0 windows added nothing: can't tell
    assert [f.kind for f in detect_loss_collapse(hidden, TH)] == ["zero_loss_unexplained"]
    cut = dict(real, train_loss=pd.Series({1200: (0.328 + 0.0012) / 1200}))  # steps after the last log: no sums
    assert [f.kind for f in detect_loss_collapse(cut, TH)] == ["zero_loss_unexplained"]


def test_a_rounded_zero_loss_without_grad_norm_is_an_ambiguity_not_memorization():
    n = 70
    st = steps(n)
    loss = np.round(2.0 * np.exp(-np.arange(n) / 5.0), 4)
    found = analyze_metrics(metrics(st, loss=loss, learning_rate=linear_lr(n)), TH)
    (f,) = found
    assert (f.kind, f.severity) == ("zero_loss_unexplained", "warning")
    assert "grad_norm was not logged" in f.message and "finite non-zero grad_norm" not in f.message
    assert "logging_nan_inf_filter=False" in f.message


def test_memorization_spans_brief_bumps_to_the_zeros_at_the_end():
    n = 60
    st = steps(n)
    loss = np.round(2.0 * np.exp(-np.arange(n) / 4.0), 4)
    loss[[40, 42]] = 0.55  # two batches not yet learned, as in a real Unsloth run
    grad = np.full(n, 0.01)
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, grad_norm=grad), TH) if f.kind == "memorization"]
    assert f.end_step == st[-1]


def test_a_negative_cross_entropy_is_flagged_and_a_dpo_loss_is_not():
    n = 30
    st = steps(n)
    loss = np.maximum(2.0 * np.exp(-np.arange(n) / 4.0), 0.001)
    loss[[20, 25]] = -0.0003
    found = analyze_metrics(metrics(st, loss=loss, grad_norm=np.full(n, 0.1)), TH)
    (neg,) = [f for f in found if f.kind == "impossible_loss"]
    assert (neg.severity, neg.step, neg.evidence["n_points"]) == ("warning", st[20], 2)
    dpo = metrics(st, loss=loss, grad_norm=np.full(n, 0.1), **{"rewards/margins": np.linspace(0, 2, n)})
    assert not [f for f in analyze_metrics(dpo, TH) if f.kind == "impossible_loss"]


def test_a_learning_rate_jump_above_the_schedule_is_flagged_a_restart_is_not():
    n = 40
    st = steps(n)
    lr = np.full(n, 0.0028)
    lr[25:] = 5.0
    found = [f for f in analyze_metrics(metrics(st, loss=np.linspace(3, 1, n), learning_rate=lr), TH)
             if f.kind == "lr_anomaly"]
    assert [(f.severity, f.step) for f in found] == [("warning", st[25])]
    warmup = np.concatenate([[1.7e-9, 1.7e-8, 3.4e-8, 5.2e-8], np.full(n - 4, 5e-7)])  # a sparse real DPO warm-up
    assert not [f for f in analyze_metrics(metrics(st, loss=np.linspace(3, 1, n), learning_rate=warmup), TH)
                if f.kind == "lr_anomaly"]
    restarts = np.tile(np.linspace(1e-4, 1e-6, 10), 4)  # cosine with restarts: back to the peak, never above
    assert not [f for f in analyze_metrics(metrics(st, loss=np.linspace(3, 1, n), learning_rate=restarts), TH)
                if f.kind == "lr_anomaly"]


def test_a_learning_rate_of_zero_mid_run_is_flagged():
    n = 40
    st = steps(n)
    lr = np.full(n, 1e-4)
    lr[10:20] = 0.0
    (f,) = [f for f in analyze_metrics(metrics(st, loss=np.linspace(3, 1, n), learning_rate=lr), TH)
            if f.kind == "lr_anomaly"]
    assert (f.step, f.end_step) == (st[10], st[19])
    decay_to_zero = np.linspace(1e-4, 0, n)
    assert not [f for f in analyze_metrics(metrics(st, loss=np.linspace(3, 1, n), learning_rate=decay_to_zero), TH)
                if f.kind == "lr_anomaly"]


def test_early_collapse_after_a_grad_norm_jump_is_linked_to_the_jump():
    # INCIDENTS.md case 5: grad_norm jumps to thousands in the first steps, then grad_norm and loss go to 0.
    n = 40
    st = steps(n)
    grad = np.array([1.1, 1.3, 3500.0, 4200.0] + [0.0] * (n - 4))
    loss = np.array([2.1, 2.0, 2.3, 1.9] + [0.0] * (n - 4))
    found = analyze_metrics(metrics(st, loss=loss, grad_norm=grad, learning_rate=linear_lr(n)), TH)
    by_kind = {f.kind: f for f in found}
    collapse, spike = by_kind["loss_collapse"], by_kind["grad_norm_spike"]
    assert (collapse.step, collapse.severity, collapse.evidence["early"]) == (st[4], "error", True)
    assert collapse.evidence["grad_norm_zero"] is True
    assert (spike.step, spike.severity) == (st[2], "error")
    assert collapse.caused_by == spike.key
    assert first_incident_of(found) == spike
    assert status_of(found) == "broken"


def test_a_sudden_late_collapse_with_a_finite_grad_norm_is_a_collapse_not_memorization():
    n, at = 150, 100
    st = steps(n, 10)
    loss = decaying_loss(n, 8)
    loss[at:] = 2e-4 * np.exp(np.random.default_rng(8).normal(0, 0.1, n - at))
    grad = noisy_grad_norm(n, 8)
    grad[at:] *= 0.01
    found = detect_loss_collapse(metrics(st, loss=loss, grad_norm=grad), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("loss_collapse", "error", st[at])]
    assert found[0].evidence["early"] is False and found[0].evidence["sudden"] is True


def test_a_collapse_the_loss_comes_back_from_is_a_warning():
    n, at = 150, 100
    st = steps(n, 10)
    loss = decaying_loss(n, 9)
    loss[at:at + 5] = 0.0
    grad = noisy_grad_norm(n, 9)
    grad[at:at + 5] = 0.0
    found = detect_loss_collapse(metrics(st, loss=loss, grad_norm=grad), TH)
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("loss_collapse", "warning", st[at], st[at + 4])]


def test_preference_and_rl_logs_are_not_judged_for_collapse_or_loss_spikes():
    n = 200
    st = steps(n)
    rng = np.random.default_rng(10)
    loss = rng.normal(0, 1e-7, n)  # GRPO: loss ~0 by design, exact zeros included
    loss[::7] = 0.0
    grad = noisy_grad_norm(n, 10, level=0.08)
    grad[::7] = 0.0
    m = metrics(st, loss=loss, grad_norm=grad, **{"rewards/format_reward/mean": rng.uniform(0, 2, n)})
    assert detect_loss_collapse(m, TH) == []
    assert detect_loss_spikes(m, TH) == []
    assert detect_divergence(m, TH) == []
    dpo = metrics(st, loss=0.69 * np.exp(-np.arange(n) / 20), **{"rewards/chosen": rng.normal(0, 1, n)})
    assert detect_loss_collapse(dpo, TH) == []


# ---------------------------------------------------------------- grad_norm spikes

def test_a_recovering_grad_norm_spike_is_a_warning_with_its_factor_and_recovery():
    n, at = 200, 120
    st = steps(n, 10)
    grad = noisy_grad_norm(n, 11, sigma=0.2)
    baseline = float(np.median(grad[at - TH.spike_window:at]))
    grad[at] = 30 * baseline
    found = detect_grad_norm_spikes(metrics(st, grad_norm=grad), TH)
    assert len(found) == 1
    f = found[0]
    assert (f.step, f.severity) == (st[at], "warning")
    assert f.evidence["baseline"] == pytest.approx(baseline)
    assert f.evidence["factor"] == pytest.approx(30.0)
    assert (f.evidence["recovered"], f.evidence["recovered_at"]) == (True, st[at + 1])


def test_close_spikes_are_one_storm_named_by_the_largest():
    n = 300
    st = steps(n)
    grad = noisy_grad_norm(n, 12, sigma=0.2)
    planted = {100: 20.0, 115: 60.0, 130: 25.0, 145: 15.0}
    for pos, mult in planted.items():
        grad[pos] = mult * float(np.median(grad[pos - TH.spike_window:pos]))
    found = detect_grad_norm_spikes(metrics(st, grad_norm=grad), TH)
    assert len(found) == 1
    f = found[0]
    assert f.evidence["storm"] is True and f.evidence["n_spikes"] == 4
    assert f.step == st[100] and f.evidence["peak_step"] == st[115]
    assert f.evidence["spike_steps"] == [int(st[p]) for p in planted]


def storm_over_a_falling_median(rise: float = 1.0, loss_lift: float = 1.0):
    """A per-step log on tiny batches (ki-system-sicherheit/prompt-mitigation-llm's flan-t5-xl LoRA): the grad_norm's
    median falls tenfold as the loss falls, with a lone jump of 5 to 10 every few dozen points, as high as the first
    steps' own; `rise` lifts the grad_norm's level and `loss_lift` the loss a hundred points into the storm."""
    n = 720
    st = steps(n, 5)
    grad = noisy_grad_norm(n, 50, level=1.0, sigma=0.4) * np.geomspace(2.0, 0.2, n)
    grad[20] = 9.5
    loss = decaying_loss(n, 50, start=2.3, end=0.03, tau=120.0, noise=0.3)
    for pos in range(200, n, 22):
        grad[pos] = 6.0 + (pos % 5)
    grad[300:] *= rise
    loss[300:] *= loss_lift
    return st, grad, loss


def test_a_storm_of_lone_spikes_no_taller_than_the_first_steps_on_a_falling_loss_is_the_heavy_tail():
    st, grad, loss = storm_over_a_falling_median()
    storms = [f for f in detect_grad_norm_spikes(metrics(st, grad_norm=grad, loss=loss), TH) if f.evidence.get("storm")]
    assert storms and {f.severity for f in storms} == {"info"}
    assert all(f.evidence["steady_storm"] for f in storms) and "heavy tail" in storms[0].message


# the grad_norm's level lifted sixfold under a median falling tenfold: twice its level before the storm. (Tripled, it
# stays 1.1x that level, as close as a steady run's storm (1.13x in cho104's LoRA SFT, judged healthy); the warning it
# got came from the largest of the storm's 485 per-point losses, one batch's noise, not from the loss's level.)
@pytest.mark.parametrize("rise, loss_lift", [(6.0, 1.0), (1.0, 3.0)])
def test_a_storm_that_lifts_the_grad_norm_level_or_the_loss_stays_a_warning(rise, loss_lift):
    st, grad, loss = storm_over_a_falling_median(rise, loss_lift)
    found = detect_grad_norm_spikes(metrics(st, grad_norm=grad, loss=loss), TH)
    assert "warning" in {f.severity for f in found}
    assert not any(f.evidence.get("steady_storm") for f in found)


def test_a_spike_right_before_nan_is_an_error_and_the_root_of_the_chain():
    n, at, nan_at = 120, 80, 83
    st = steps(n, 5)
    loss, grad = decaying_loss(n, 13), noisy_grad_norm(n, 13, sigma=0.2)
    grad[at] = 40 * float(np.median(grad[at - TH.spike_window:at]))
    grad[at + 1:nan_at] *= 8
    grad[nan_at:] = NAN
    loss[nan_at + 1:] = 0.0
    found = analyze_metrics(metrics(st, loss=loss, grad_norm=grad, learning_rate=linear_lr(n)), TH)
    spike = next(f for f in found if f.kind == "grad_norm_spike")
    nan = next(f for f in found if f.kind == "nonfinite_metric")
    masked = next(f for f in found if f.kind == "masked_nan_loss")
    assert (spike.step, spike.severity) == (st[at], "error")
    assert (nan.step, nan.caused_by) == (st[nan_at], spike.key)
    assert (masked.step, masked.caused_by) == (st[nan_at + 1], nan.key)
    assert first_incident_of(found) == spike


def test_a_spike_long_before_a_nan_it_recovered_from_is_not_its_cause():
    n, at, nan_at = 200, 40, 150
    st = steps(n, 5)
    grad = noisy_grad_norm(n, 14, sigma=0.2)
    grad[at] = 40 * float(np.median(grad[at - TH.spike_window:at]))
    grad[nan_at:] = NAN
    found = analyze_metrics(metrics(st, loss=decaying_loss(n, 14), grad_norm=grad), TH)
    spike = next(f for f in found if f.kind == "grad_norm_spike")
    nan = next(f for f in found if f.kind == "nonfinite_metric")
    assert spike.severity == "warning" and nan.caused_by is None
    assert first_incident_of(found) == nan


# ---------------------------------------------------------------- loss spikes and divergence

def test_a_planted_loss_spike_is_found_and_recovers():
    n, at = 300, 150
    st = steps(n, 10)
    loss = decaying_loss(n, 15)
    baseline = float(np.median(loss[at - TH.spike_window:at]))
    loss[at] = 5 * baseline
    found = detect_loss_spikes(metrics(st, loss=loss, learning_rate=linear_lr(n)), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("loss_spike", "warning", st[at])]
    assert found[0].evidence["factor"] == pytest.approx(5.0)
    assert found[0].evidence["recovered_at"] == st[at + 1]


def test_a_loss_jump_at_a_learning_rate_restart_is_a_new_phase_not_an_incident():
    n, at = 200, 100
    st = steps(n)
    loss = np.concatenate([decaying_loss(at, 16, start=2.0, end=0.05), decaying_loss(n - at, 17, start=3.0)])
    # phase 1 decays to 0 at its last step, phase 2 warms up again; the end of phase 2 is no restart
    lr = np.concatenate([linear_lr(at), linear_lr(n - at)])
    m = metrics(st, loss=loss, learning_rate=lr)
    assert lr_restart_steps(m) == [st[at - 1]]
    found = detect_loss_spikes(m, TH)
    assert [(f.severity, f.step, f.evidence["lr_restart"]) for f in found] == [("info", st[at], st[at - 1])]
    assert detect_divergence(m, TH) == []


def test_a_loss_that_rises_and_stays_up_to_the_end_diverges():
    n, at = 160, 100
    st = steps(n, 10)
    rng = np.random.default_rng(18)
    loss = np.where(np.arange(n) < at, 1.0, 4.0) * np.exp(rng.normal(0, 0.02, n))
    found = detect_divergence(metrics(st, loss=loss), TH)
    assert [(f.kind, f.severity, f.step, f.end_step) for f in found] == [("divergence", "error", st[at], st[-1])]


def test_a_jump_the_loss_comes_back_down_from_is_not_a_divergence():
    n, at = 200, 100
    st = steps(n, 10)
    rng = np.random.default_rng(19)
    i = np.arange(n)
    level = np.where(i < at, 1.0, 1.0 + 3.0 * np.exp(-(i - at) / 15.0))
    loss = level * np.exp(rng.normal(0, 0.02, n))
    assert detect_divergence(metrics(st, loss=loss), TH) == []


# ---------------------------------------------------------------- DeepSpeed overflow

def overflow_metrics(overflow_steps: list[int], start_scale: float = 65536.0) -> dict[str, pd.Series]:
    st = np.asarray(overflow_steps, dtype="int64")
    scale = start_scale / 2.0 ** np.arange(1, len(st) + 1)
    return metrics(st, overflow=np.ones(len(st)), loss_scale=scale)


def test_a_loss_scale_falling_to_its_floor_is_an_error():
    ov = list(range(100, 120))  # halving from 65536 each step: 1.0 after 16 overflows (step 115)
    found = detect_loss_scale_overflow(overflow_metrics(ov), TH)
    assert [(f.severity, f.step, f.evidence["floor_step"]) for f in found] == [("error", 100, 115)]


def test_consecutive_overflows_without_reaching_the_floor_are_a_storm_warning():
    ov = [10, 11] + list(range(500, 506))
    found = detect_loss_scale_overflow(overflow_metrics(ov), TH)
    assert [(f.severity, f.step, f.evidence["longest_run"]) for f in found] == [("warning", 500, 6)]


def test_a_few_isolated_overflows_are_skipped_updates_the_owner_should_know_of():
    """VERDICTS.md: isolated fp16 skipped steps are a warning (the scaler did its job, but updates were skipped);
    every judge of the DeepSpeed consoles in tests/realworld (linskybing, DeepSpeed-Chat) says so."""
    found = detect_loss_scale_overflow(overflow_metrics([1, 2, 1000, 2000]), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("skipped_steps", "warning", 1)]
    assert "4 updates skipped" in found[0].message
    assert detect_loss_scale_overflow(healthy(50, 0), TH) == []


# ---------------------------------------------------------------- skipped optimizer steps

def test_an_isolated_nan_grad_norm_with_a_stalled_lr_is_a_skipped_step_not_a_broken_run():
    n, at = 200, 150
    st = steps(n)
    m = healthy(n, 20, every=1)
    m["grad_norm"].iloc[at] = math.inf
    m["learning_rate"].iloc[at] = m["learning_rate"].iloc[at - 1]  # the scheduler did not step
    found = analyze_metrics(m, TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("skipped_steps", "warning", st[at])]
    assert found[0].evidence["lr_stalled"] == [True]
    assert status_of(found) == "warning"


def test_skipped_steps_right_after_the_start_are_the_scaler_calibrating_and_still_a_warning():
    # VERDICTS.md: isolated fp16 skipped steps are a warning (the owner should know updates were skipped)
    m = healthy(100, 21, every=1)
    m["grad_norm"].iloc[[0, 1, 5]] = NAN
    found = analyze_metrics(m, TH)
    assert [(f.kind, f.severity, f.evidence["steps"]) for f in found] == [("skipped_steps", "warning", [1, 2, 6])]
    assert "calibrating" in found[0].message and found[0].evidence["at_restart"]
    assert status_of(found) == "warning"


def test_skipped_iterations_counted_by_a_megatron_log_are_a_warning():
    from forensics.analyzers.skipped_steps import detect_skipped_steps

    st = steps(20, 10)
    counts = np.zeros(20)
    counts[[0, 1, 2]] = [10, 8, 1]
    (f,) = detect_skipped_steps(metrics(st, loss=decaying_loss(20, 46), skipped_iterations=counts), TH)
    assert (f.severity, f.step, f.evidence["count"], f.evidence["at_restart"]) == ("warning", 10, 19, True)
    assert detect_skipped_steps(metrics(st, loss=decaying_loss(20, 46), skipped_iterations=np.zeros(20)), TH) == []


def test_with_logging_every_ten_steps_one_skip_leaves_the_lr_nine_tenths_of_the_way():
    per_step = linear_lr(1000, peak=1e-4, warmup=10)
    logged = np.arange(10, 1001, 10)
    lr = per_step[logged - 1].copy()
    lr[50] = per_step[logged[50] - 2]  # one skipped scheduler step in the window ending at step 510
    m = metrics(logged, learning_rate=lr)
    assert lr_stalled(m, int(logged[50])) is True
    assert lr_stalled(m, int(logged[60])) is False


def test_nan_grad_norm_to_the_end_is_not_a_skipped_step():
    n = 100
    m = healthy(n, 22, every=1)
    m["grad_norm"].iloc[90:] = NAN
    assert detect_skipped_steps(m, TH) == []
    assert [f.severity for f in detect_nonfinite_metrics(m, TH)] == ["error"]


# ---------------------------------------------------------------- verdict and first incident

def finding(kind, severity, step, abandoned=False, caused_by=None):
    return Finding(kind, severity, step, f"{kind} at {step}.", abandoned=abandoned, caused_by=caused_by)


def abandoned_error(kind, step):
    """An error of an attempt a later one threw away, as `run_all` reports it: a warning that says it was an error."""
    return Finding(kind, "warning", step, f"{kind} at {step}.", abandoned=True, evidence={ERROR_IN_ITS_ATTEMPT: True})


def test_status_counts_standing_errors_as_broken_and_ignores_info():
    assert status_of([]) == "healthy"
    assert status_of([finding("memorization", "info", 5)]) == "healthy"
    assert status_of([finding("skipped_steps", "warning", 5)]) == "warning"
    assert status_of([finding("nonfinite_metric", "error", 5)]) == "broken"
    assert status_of([abandoned_error("nonfinite_metric", 5)]) == "warning"


def test_an_abandoned_attempts_warning_is_history_not_the_status():
    spike = finding("loss_spike", "warning", 5, abandoned=True)
    assert status_of([spike]) == "healthy" and first_incident_of([spike]) is None
    assert status_of([spike, finding("lr_anomaly", "warning", 50)]) == "warning"


def test_first_incident_walks_back_the_chain_and_prefers_standing_findings():
    spike = finding("grad_norm_spike", "error", 40)
    nan = finding("nonfinite_metric", "error", 50, caused_by=spike.key)
    masked = finding("masked_nan_loss", "error", 55, caused_by=nan.key)
    early_warning = finding("loss_spike", "warning", 10)
    old = abandoned_error("nonfinite_metric", 5)
    assert first_incident_of([old, early_warning, masked, nan, spike]) == spike
    assert first_incident_of([old, early_warning]) == early_warning
    assert first_incident_of([old, finding("memorization", "info", 1)]) == old
    assert first_incident_of([finding("memorization", "info", 1)]) is None


def test_a_nan_run_logged_like_hf_gives_the_chain_from_the_first_nan_step():
    # logging every 5, eval every 50 at the same steps as train logs; NaN injected at step 52
    n = 40
    st = steps(n, 5)
    _, m = hf_nan_run(n, 10)  # grad NaN from step 55, loss finite at 55, 0.0 from 60
    eval_steps = np.arange(50, 201, 50)
    evals = decaying_loss(len(eval_steps), 23, end=1.0)
    evals[1:] = NAN  # eval at 100 on
    rows = in_file_order(long_rows(m), long_rows(metrics(eval_steps, eval_loss=evals)))
    found = run_all(build_timeline([LogRecords("trainer_state.json", "trainer_state", rows, mtime=0.0)]), TH)
    by = {(f.kind, f.metric): f for f in found}
    root = by[("nonfinite_metric", "grad_norm")]
    assert (root.step, root.severity) == (st[10], "error") == (55, "error")
    assert by[("masked_nan_loss", "loss")].step == 60 and by[("masked_nan_loss", "loss")].caused_by == root.key
    assert by[("nonfinite_metric", "eval_loss")].step == 100
    assert by[("nonfinite_metric", "eval_loss")].caused_by == root.key
    assert status_of(found) == "broken" and first_incident_of(found) == root


def test_an_incident_in_an_attempt_a_resume_threw_away_is_only_a_warning():
    def tb(step_list, loss, grad, wall0):
        m = metrics(np.asarray(step_list), loss=loss, grad_norm=grad)
        rows = long_rows(m)
        rows["wall_time"] = wall0 + rows["step"].to_numpy(dtype="float64")
        return rows
    first = tb(range(10, 80, 10), [3, 2.5, 2, 1.8, 1.7, 0.0, 0.0], [1, 1.1, 0.9, 1, NAN, NAN, NAN], 1000.0)
    second = tb(range(50, 110, 10), [1.7, 1.6, 1.5, 1.4, 1.3, 1.2], [1, 0.9, 1.1, 1, 0.95, 1.05], 5000.0)
    timeline = build_timeline([LogRecords("runs/a/ev", "tensorboard", first), LogRecords("runs/b/ev", "tensorboard", second)])
    found = run_all(timeline, TH)
    assert found and all(f.abandoned for f in found)
    nan = next(f for f in found if f.kind == "nonfinite_metric")
    assert (nan.step, nan.severity, nan.metric) == (50, "warning", "grad_norm")
    assert "threw away" in nan.message
    masked = next(f for f in found if f.kind == "masked_nan_loss")
    assert masked.caused_by == nan.key and masked.severity == "warning"
    assert status_of(found) == "warning"
    assert first_incident_of(found) == nan


def test_metrics_from_rows_keeps_only_logged_points_and_their_nan():
    rows = pd.DataFrame({"step": [10, 20, 20, 25], "metric": ["loss", "loss", "grad_norm", "eval_loss"],
                         "value": [1.0, NAN, 2.0, 0.5]})
    m = metrics_from_rows(rows)
    assert list(m["loss"].index) == [10, 20] and math.isnan(m["loss"].loc[20])
    assert list(m["eval_loss"].index) == [25]


def test_a_jump_over_the_factor_but_within_a_wide_spread_is_not_a_spike():
    # batches of very different sizes: grad_norm spread evenly over [0.05, 2.0], no tail of its own
    n, at = 200, 120
    st = steps(n)
    rng = np.random.default_rng(24)
    grad = np.concatenate([rng.permutation(np.linspace(0.05, 2.0, 20)) for _ in range(n // 20)])
    window = grad[at - TH.spike_window:at]
    median = float(np.median(window))
    spread = 1.4826 * float(np.median(np.abs(window - median)))
    wide_jump = median + 7.0 * spread          # under the robust z of 8 ...
    assert wide_jump > TH.spike_factor * median  # ... though over the factor of 5
    grad[at] = wide_jump
    assert detect_grad_norm_spikes(metrics(st, grad_norm=grad), TH) == []
    grad[at] = median + 20.0 * spread          # over both: a spike
    assert [f.step for f in detect_grad_norm_spikes(metrics(st, grad_norm=grad), TH)] == [st[at]]


def test_a_small_grad_norm_bump_that_settles_at_once_is_info_not_a_warning():
    n, at = 300, 150
    st = steps(n)
    rng = np.random.default_rng(7)
    grad = 1.0 + 0.05 * rng.standard_normal(n)
    grad[at] = 6.0  # 6x the median: over the spike bar, under spike_warn_factor
    found = detect_grad_norm_spikes(metrics(st, grad_norm=grad, learning_rate=linear_lr(n)), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("grad_norm_spike", "info", st[at])]
    grad[at] = 30.0  # a big one stays a warning even when it settles
    found = detect_grad_norm_spikes(metrics(st, grad_norm=grad, learning_rate=linear_lr(n)), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("grad_norm_spike", "warning", st[at])]


# ---------------------------------------------------------------- issue 11: what real runs do

def test_a_ten_point_log_that_rises_many_fold_diverges():
    # QLoRA at LR 5e-3, logged every 10 steps: loss 1.0 -> 29.6 and no NaN anywhere.
    st = steps(10, every=10)
    loss = np.array([1.0, 0.9, 0.85, 1.6, 4.2, 9.8, 15.0, 21.3, 26.0, 29.6])
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, grad_norm=np.full(10, 1.0)), TH) if f.kind == "divergence"]
    assert f.severity == "error" and f.step in (st[3], st[4])  # where it leaves its trend, within a point


def test_heavy_tailed_per_step_noise_on_a_stable_loss_is_not_a_divergence():
    rng = np.random.default_rng(7)
    n = 3000
    st = steps(n)
    trend = 1.2 + 0.8 * np.exp(-np.arange(n) / 400)
    loss = trend * rng.lognormal(0.0, 0.45, n)        # tiny batches: a loss per step, heavy tails
    grad = rng.pareto(2.0, n) + 0.3
    found = analyze_metrics(metrics(st, loss=loss, grad_norm=grad, learning_rate=np.full(n, 2e-4)), TH)
    assert not [f for f in found if f.kind == "divergence"]


def test_a_slow_divergence_starts_where_the_loss_left_its_low_not_where_it_crossed_a_line():
    rng = np.random.default_rng(3)
    n = 3000
    st = steps(n)
    base = np.concatenate([np.linspace(3.0, 1.0, 90), 1.0 + 0.003 * np.arange(n - 90)])  # rises from step 90
    loss = base * rng.lognormal(0.0, 0.05, n)
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, grad_norm=np.full(n, 1.0)), TH) if f.kind == "divergence"]
    assert 60 <= f.step <= 200, f.step


def test_a_dpo_run_at_ln2_with_zero_grad_norm_never_learned():
    n = 40
    st = steps(n)
    m = metrics(st, loss=np.full(n, 0.6931), grad_norm=np.zeros(n), **{"rewards/chosen": np.zeros(n),
                "rewards/rejected": np.zeros(n), "rewards/margins": np.zeros(n)})
    found = analyze_metrics(m, TH)
    (f,) = [f for f in found if f.kind == "never_learned"]
    assert (f.severity, f.step, f.end_step) == ("error", st[0], st[-1]) and status_of(found) == "broken"


def test_a_dpo_run_whose_loss_falls_below_ln2_learned():
    n = 40
    st = steps(n)
    m = metrics(st, loss=np.linspace(0.6931, 0.35, n), grad_norm=np.full(n, 3.0),
                **{"rewards/margins": np.linspace(0, 1.5, n)})
    assert not [f for f in analyze_metrics(m, TH) if f.kind in ("never_learned", "no_learning_evidence")]


def test_a_fresh_head_loss_flat_at_ln_vocab_never_learned_and_pretraining_from_there_is_fine():
    n = 50
    st = steps(n)
    flat = metrics(st, loss=np.full(n, 11.93), grad_norm=np.zeros(n))  # ln(151936): a Qwen2 head, no gradient
    assert [f.kind for f in analyze_metrics(flat, TH) if f.severity == "error"] == ["never_learned"]
    learning = metrics(st, loss=np.linspace(11.9, 4.0, n), grad_norm=np.full(n, 1.5))
    assert not [f for f in analyze_metrics(learning, TH) if f.kind == "never_learned"]


def test_a_loss_that_does_not_fall_is_no_evidence_of_learning():
    from forensics.analyzers import run_all
    from forensics.timeline import LogRecords, build_timeline

    n = 40
    rng = np.random.default_rng(1)
    rows = pd.DataFrame({"step": np.repeat(steps(n), 2), "metric": ["loss", "grad_norm"] * n,
                         "value": np.ravel(np.column_stack([2.0 + 0.02 * rng.standard_normal(n), np.ones(n)])),
                         "wall_time": np.nan})
    found = run_all(build_timeline([LogRecords("trainer_state.json", "trainer_state", rows)]), TH)
    assert [f.kind for f in found] == ["no_learning_evidence"] and status_of(found) == "warning"


def test_an_eval_loss_climbing_well_above_its_best_is_overfitting_and_a_falling_one_is_not():
    n = 40
    st = steps(n, every=10)
    train = np.linspace(2.0, 0.3, n)
    evals = {s: v for s, v in zip(st[::5], [1.5, 1.1, 0.9, 1.0, 1.3, 1.4, 1.5, 1.6])}
    m = metrics(st, loss=train, grad_norm=np.ones(n))
    m["eval_loss"] = pd.Series(evals, dtype="float64")
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]
    # dated at the first eval after the best (where the rise shows); the best eval's step is the one to keep
    assert (f.severity, f.step, f.evidence["best_step"]) == ("warning", st[15], st[10]) and "overfitting" in f.message
    m["eval_loss"] = pd.Series({s: 1.5 - 0.1 * i for i, s in enumerate(st[::5])}, dtype="float64")
    assert not [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


def test_four_evals_one_an_epoch_each_well_above_the_first_are_overfitting_like_three():
    n = 40
    st = steps(n, every=10)
    m = metrics(st, loss=np.linspace(2.0, 0.3, n), grad_norm=np.ones(n))
    for evals in ([1.0, 1.2, 1.25], [1.0, 1.2, 1.22, 1.25]):  # 20-25% above the first: under overfit_rise (30%)
        m["eval_loss"] = pd.Series(dict(zip(st[9::10], evals)), dtype="float64")
        (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]
        assert (f.step, f.evidence["best_step"]) == (st[19], st[9])


# ---------------------------------------------------------------- what the real-run corpus taught (2026-11-24)

def test_memorization_without_eval_loss_fires_only_when_the_low_loss_lasts_to_the_end():
    n = 300
    st = steps(n, 10)
    loss = decaying_loss(n, 31, start=4.0, end=0.004, tau=30.0)
    (f,) = [f for f in detect_loss_collapse(metrics(st, loss=loss), TH) if f.kind == "memorization"]
    assert f.severity == "warning" and f.end_step == st[-1] and f.step <= f.evidence["settled_step"]
    assert loss[list(st).index(f.evidence["settled_step"])] <= TH.memorization_level
    # the same descent with an eval loss logged: overfitting judges, not this rule
    evals = metrics(st, loss=loss, eval_loss=np.full(n, 0.005))
    assert not [f for f in detect_loss_collapse(evals, TH) if f.kind == "memorization"]
    # a phase that memorized and then met new data is not the final state
    later = np.concatenate([loss, decaying_loss(100, 32, start=2.0, end=1.0)])
    assert not detect_loss_collapse(metrics(steps(n + 100, 10), loss=later), TH)
    # a loss that is small from the start never descended
    assert not detect_loss_collapse(metrics(st, loss=np.full(n, 0.01)), TH)


def test_a_from_scratch_memorization_is_dated_where_the_loss_stops_falling_by_factors():
    """From random weights the loss falls across orders of magnitude (8.5 nats to 0.12: tiny Shakespeare learned by
    heart); on a linear scale the descent looks level at 0.5 while the loss still halves twice more. Dated on a log
    scale, memorization starts where the loss is near its floor (under about twice it: memorization.LOG_SETTLED_SHARE)."""
    from forensics.analyzers.memorization import memorized_from_scratch
    fall = np.exp(np.linspace(np.log(8.5), np.log(0.12), 400))
    loss = np.concatenate([fall, np.full(60, 0.12)])
    st = steps(len(loss), 10)
    (f,) = memorized_from_scratch(metrics(st, loss=loss), TH)
    assert f.kind == "memorization" and loss[list(st).index(f.step)] <= 2 * 0.12, (f.step, f.message)


def test_a_training_loss_gone_to_zero_while_the_eval_loss_rises_is_one_overfitting_story():
    n = 40
    st = steps(n, every=10)
    train = np.round(2.0 * np.exp(-np.arange(n) / 4.0), 4)
    m = metrics(st, loss=train, grad_norm=np.full(n, 0.05))
    m["eval_loss"] = pd.Series(dict(zip(st[::5], [1.5, 1.1, 0.9, 1.0, 1.3, 1.4, 1.5, 1.6])), dtype="float64")
    found = analyze_metrics(m, TH)
    assert [f.kind for f in found] == ["overfitting"]
    assert found[0].evidence["memorization_step"] > found[0].evidence["best_step"] and "near 0" in found[0].message


def test_a_quiet_eval_loss_that_sits_above_its_best_for_four_evals_is_overfitting_and_a_noisy_one_is_not():
    n = 130
    st = steps(n, 50)
    train = np.linspace(2.2, 1.55, n)
    quiet = [1.641, 1.595, 1.577, 1.569, 1.571, 1.566, 1.561, 1.554, 1.5518, 1.5734, 1.5759, 1.5777, 1.5776]
    m = metrics(st, loss=train)
    m["eval_loss"] = pd.Series(dict(zip(st[9::10], quiet)), dtype="float64")
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]
    assert (f.step, f.evidence["best_step"]) == (st[99], st[89])
    rng = np.random.default_rng(56)
    noisy = np.array(quiet) + rng.normal(0, 0.03, len(quiet))
    noisy[8] = noisy.min() - 0.001
    noisy[9:] = noisy[8] + np.array([0.02, 0.025, 0.022, 0.024])
    m["eval_loss"] = pd.Series(dict(zip(st[9::10], noisy)), dtype="float64")
    assert not [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


def test_one_lucky_low_eval_among_noisy_ones_is_not_a_best_to_overfit_from():
    rng = np.random.default_rng(58)
    n = 70
    st = steps(n, 8)
    noisy = 1.85 + rng.normal(0, 0.3, n)
    noisy[20] = 1.04  # one lucky single-batch validation
    m = metrics(st, loss=np.linspace(2.3, 0.9, n))
    m["eval_loss"] = pd.Series(noisy, index=st)
    assert not [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]
    m["eval_loss"] = pd.Series(np.concatenate([np.linspace(1.8, 1.2, 20), np.linspace(1.2, 2.0, 50)])
                               + rng.normal(0, 0.05, n), index=st)  # a real turn: still found
    assert [f.kind for f in analyze_metrics(m, TH) if f.kind == "overfitting"] == ["overfitting"]


def test_overfitting_is_found_in_a_named_eval_set():
    n = 40
    st = steps(n, 100)
    train = decaying_loss(n, 33, start=2.0, end=0.05, tau=8.0)
    evals = np.concatenate([np.linspace(2.0, 1.0, 5), np.linspace(1.1, 2.5, n - 5)])
    found = [f for f in analyze_metrics(metrics(st, loss=train, eval_g0_loss=evals), TH) if f.kind == "overfitting"]
    assert [(f.metric, f.step, f.evidence["best_step"]) for f in found] == [("eval_g0_loss", st[5], st[4])]
    flat = metrics(st, loss=train, eval_g0_loss=np.linspace(2.0, 1.0, n))
    assert not [f for f in analyze_metrics(flat, TH) if f.kind == "overfitting"]


def test_a_grad_norm_spike_the_loss_ignores_is_info_and_one_it_follows_is_a_warning():
    n, at = 300, 150
    st = steps(n, 10)
    loss = decaying_loss(n, 34)
    grad = noisy_grad_norm(n, 35, sigma=0.2)
    grad[at] = 12 * float(np.median(grad[at - TH.spike_window:at]))
    (quiet,) = detect_grad_norm_spikes(metrics(st, loss=loss, grad_norm=grad), TH)
    assert quiet.severity == "info" and "did not react" in quiet.message
    loss[at:at + 2] *= 4
    (felt,) = detect_grad_norm_spikes(metrics(st, loss=loss, grad_norm=grad), TH)
    assert felt.severity == "warning"


def test_single_batch_loss_spikes_in_a_per_step_log_are_info_but_a_lasting_one_is_a_warning():
    n = 600
    st = steps(n, 1)
    loss = decaying_loss(n, 36, tau=200.0, noise=0.15)  # small batches: 15% from one step to the next
    for at in (200, 400):
        loss[at] *= 4
    found = detect_loss_spikes(metrics(st, loss=loss), TH)
    assert [(f.severity, f.evidence.get("single_batches")) for f in found] == [("info", True)]
    loss[450:460] *= 4
    found = detect_loss_spikes(metrics(st, loss=loss), TH)
    assert any(f.severity == "warning" and 450 <= f.step <= 452 for f in found)
    # logged every 10 steps, one point is ten batches: still a warning
    every10 = decaying_loss(n, 37, tau=200.0, noise=0.03)
    every10[300] *= 4
    assert [f.severity for f in detect_loss_spikes(metrics(steps(n, 10), loss=every10), TH)] == ["warning"]


def _grpo(reward: np.ndarray) -> dict[str, pd.Series]:
    n = len(reward)
    return metrics(steps(n, 5), loss=np.zeros(n), reward=reward, reward_std=np.full(n, 0.3),
                   **{"completions/clipped_ratio": np.linspace(0.5, 1.0, n)})


def test_a_reward_that_gives_back_its_gain_is_a_warning_and_a_rising_one_is_not():
    from forensics.analyzers.reward_decline import detect_reward_decline

    rng = np.random.default_rng(38)
    n = 48
    rise_fall = np.concatenate([np.linspace(0.2, 0.9, n // 2), np.linspace(0.9, 0.1, n // 2)]) + rng.normal(0, 0.05, n)
    (f,) = detect_reward_decline(_grpo(rise_fall), TH)
    assert f.kind == "reward_decline" and f.severity == "warning" and "clipped_ratio" in f.message
    assert abs(f.step - 5 * (n // 2)) <= 5 * (n // 8)
    rising = np.linspace(0.2, 0.9, n) + rng.normal(0, 0.05, n)
    assert detect_reward_decline(_grpo(rising), TH) == []
    noisy_flat = 0.5 + rng.normal(0, 0.2, n)
    assert detect_reward_decline(_grpo(noisy_flat), TH) == []


def test_hard_batches_close_together_in_a_per_step_log_are_noise_but_four_high_steps_in_a_row_are_not():
    # as in a real per-step log (adu3110): 2.31, 1.29, 0.52, 0.51, 1.03, 0.68, 1.01 over a median of 0.63
    n = 400
    st = steps(n, 1)
    loss = decaying_loss(n, 44, start=1.0, end=0.6, tau=300.0, noise=0.15)  # small batches, as adu3110's
    loss[200:207] *= [3.7, 2.0, 1.0, 1.0, 1.6, 1.0, 1.6]
    found = detect_loss_spikes(metrics(st, loss=loss), TH)
    assert [(f.severity, f.evidence.get("single_batches")) for f in found] == [("info", True)]
    loss[300:304] *= 3.5  # an unstable model stays high step after step
    found = detect_loss_spikes(metrics(st, loss=loss), TH)
    assert [f.step for f in found if f.severity == "warning"] == [st[300]]


def test_a_loss_that_reached_its_floor_within_the_first_epoch_is_easy_data_not_memorization():
    n = 300
    st = steps(n, 10)
    loss = decaying_loss(n, 45, start=3.0, end=0.07, tau=3.0, noise=0.05)  # level by step ~100, epoch 0.5
    within_first = metrics(st, loss=loss, epoch=np.linspace(0.05, 15.0, n))
    assert [f for f in detect_loss_collapse(within_first, TH) if f.kind == "memorization"] == []
    slow = decaying_loss(n, 45, start=3.0, end=0.04, tau=60.0, noise=0.05)
    (f,) = [f for f in detect_loss_collapse(metrics(st, loss=slow, epoch=np.linspace(0.05, 15.0, n)), TH)
            if f.kind == "memorization"]
    assert f.evidence["epoch"] >= 1 and f.step < f.evidence["settled_step"]


def handed_targets(n: int = 37, floor: float = 0.0) -> np.ndarray:
    """Phiwain/LLM's shape: 6 nats at the first point, under a tenth by the third, under 0.01 by the sixth, then on
    down to 0.0000 as a 4-decimal print shows it (or levelling off at `floor`)."""
    return np.round(6.0 * np.exp(-1.3 * np.arange(n)) + floor, 4)


def test_a_loss_at_zero_within_the_first_epoch_that_never_levels_off_is_a_collapse_not_learning():
    st = steps(37, 10)
    loss = handed_targets()
    (f,) = detect_loss_collapse(metrics(st, loss=loss, epoch=st / 125), TH)
    fall = int(np.flatnonzero(loss <= loss[0] / 10)[0])
    assert (f.kind, f.severity, f.step, f.end_step) == ("loss_collapse", "error", st[fall], st[-1])
    assert f.evidence["first_epoch"] and f.evidence["epoch"] < 1 and "labels" in f.message


def test_a_loss_at_zero_within_the_first_epoch_is_no_collapse_where_it_levels_off_an_eval_loss_judges_or_later():
    st = steps(37, 10)
    collapse = [("loss_collapse", "error")]

    def judged(eval_loss=None, **series):
        m = metrics(st, **series)
        if eval_loss is not None:
            m["eval_loss"] = eval_loss
        return [(f.kind, f.severity) for f in detect_loss_collapse(m, TH)]

    assert judged(loss=handed_targets(), epoch=st / 125) == collapse  # the rule fires on this run ...
    # ... not where the loss levels off at what its answers leave uncertain (a VQA's short templated answers)
    assert judged(loss=handed_targets(floor=0.003), epoch=st / 125) != collapse
    # nor with an eval loss beside it, nor where it got there after the first epoch (memorization), nor without
    # an epoch, nor from a start under 1 nat (a classifier's head)
    eval_loss = pd.Series(handed_targets()[4::5], index=st[4::5])
    assert "loss_collapse" not in dict(judged(loss=handed_targets(), epoch=st / 125, eval_loss=eval_loss))
    assert "loss_collapse" not in dict(judged(loss=handed_targets(), epoch=st / 25))
    assert "loss_collapse" not in dict(judged(loss=handed_targets()))
    assert "loss_collapse" not in dict(judged(loss=handed_targets() / 10, epoch=st / 125))
    # nor where the loss stops short of the floor (0.0005: a deterministic task learned, something still uncertain)
    assert judged(loss=handed_targets(floor=0.0005), epoch=st / 125) != collapse
    # nor where the epoch never reaches 1.5: a streaming run's epoch is a fraction of max_steps, whatever repeated
    assert judged(loss=handed_targets(), epoch=st / st[-1]) != collapse


@pytest.mark.parametrize("architecture, status, kind", [
    ("LlamaForCausalLM", "broken", "loss_collapse"),
    ("BertForSequenceClassification", "warning", "zero_loss_unexplained"),
    ("ViTForImageClassification", "warning", "zero_loss_unexplained")])
def test_a_classifier_at_zero_loss_within_the_first_epoch_may_have_an_easy_task(tmp_path, architecture, status, kind):
    """A classification head's loss is no next-token loss: ~0 before any example was seen twice can be an easy
    task, so it is a warning saying how to tell, where a language model's is a collapse."""
    import json

    import forensics

    st = steps(37, 10)
    history = [{"step": int(s), "epoch": float(s) / 125, "loss": float(v)} for s, v in zip(st, handed_targets())]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": int(st[-1]), "log_history": history}))
    (tmp_path / "config.json").write_text(json.dumps({"architectures": [architecture], "vocab_size": 30522}))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind) == (status, kind)
    assert ("eval loss and accuracy" in a.first_incident.message) == (status == "warning")


def _classifier_history(evaluations: list[dict]) -> list[dict]:
    """taehyun-me's reward model (a SEQ_CLS LoRA): loss 0.285 -> 0.0006 by epoch 0.98, the evaluations among the
    training entries in step order, as the Trainer's log_history holds them."""
    st = steps(22, 10)
    loss = np.concatenate([[0.285, 0.156, 0.05, 0.018], np.geomspace(0.0045, 0.0006, 18)])
    history = [{"step": int(s), "epoch": float(s) / 224, "loss": float(v), "grad_norm": 0.5}
               for s, v in zip(st, loss)]
    return sorted(history + evaluations, key=lambda e: e["step"])


def _classifier_run(tmp_path, evaluations: list[dict]):
    import json

    import forensics

    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 220,
                                                             "log_history": _classifier_history(evaluations)}))
    (tmp_path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "task_type": "SEQ_CLS", "r": 16}))
    return forensics.analyze(tmp_path)


def test_a_classifier_at_zero_loss_within_the_first_epoch_whose_held_out_loss_is_as_low_learned(tmp_path):
    """taehyun-me: eval accuracy 1.0 and eval loss 0.003 at every evaluation: the held-out pairs say the task is easy
    and learned (healthy, nothing to act on)."""
    evaluations = [{"step": s, "epoch": s / 224, "eval_loss": v, "eval_accuracy": 1.0}
                   for s, v in ((50, 0.0064), (100, 0.0028), (150, 0.0028), (200, 0.0031))]
    a = _classifier_run(tmp_path, evaluations)
    assert a.status == "healthy" and not [f for f in a.findings if f.severity != "info"]


@pytest.mark.parametrize("accuracy, status", [(1.0, "healthy"), (0.9, "warning")])
def test_a_classifier_at_zero_loss_within_the_first_epoch_whose_held_out_evaluation_is_solved_learned(
        tmp_path, accuracy, status):
    """PraveenBarathi-K's ALBERT classifier: one evaluation, at the end, right on every example at a loss as low: an
    easy task learned (info). Held-out examples still wrong leave the question open (a warning)."""
    a = _classifier_run(tmp_path, [{"step": 220, "epoch": 220 / 224, "eval_loss": 0.0002, "eval_accuracy": accuracy}])
    assert a.status == status
    (f,) = [f for f in a.findings if f.kind == "zero_loss_unexplained"]
    assert (f.severity == "info") == (status == "healthy")


def test_a_language_model_loss_already_near_zero_at_its_first_logged_step_is_unexplained_from_there():
    """charles-wang888's Qwen2.5-7B-Instruct fine-tune: 0.0037 at step 10 (epoch 0.05), falling to 0.0002 over three
    epochs: near certain of its labels before training did anything, which memorization (dated where the loss
    reached 0.001) does not explain. A log that starts later (a resume, epoch 1.2) or at an ordinary loss is not this."""
    st = steps(57, 10)
    loss = np.geomspace(0.0037, 0.0002, 57)
    found = detect_loss_collapse(metrics(st, loss=loss, grad_norm=np.geomspace(0.0016, 0.0005, 57),
                                         epoch=st / 191), TH)
    assert [(f.kind, f.step) for f in found] == [("zero_loss_unexplained", 10)]
    resumed = detect_loss_collapse(metrics(st, loss=loss, epoch=1.2 + st / 191), TH)
    assert "from_the_start" not in str([f.evidence for f in resumed])
    ordinary = np.concatenate([[1.9, 1.2, 0.8], np.geomspace(0.3, 0.0002, 54)])
    assert "from_the_start" not in str([f.evidence for f in detect_loss_collapse(
        metrics(st, loss=ordinary, epoch=st / 191), TH)])


def test_memorization_reached_in_the_second_epoch_stays_memorization_though_its_descent_levelled_off_in_the_first():
    n = 100
    st = steps(n, 10)
    i = np.arange(n)
    loss = 2.0 * np.exp(-i / 10.0)  # within 5% of its fall by point ~30 (epoch 0.9), under 1e-3 from point ~76
    m = metrics(st, loss=loss, grad_norm=0.5 * np.exp(-i / 30.0), epoch=np.linspace(0.03, 3.0, n))
    (f,) = [f for f in detect_loss_collapse(m, TH) if f.kind in ("memorization", "zero_loss_unexplained")]
    assert f.kind == "memorization" and f.step < f.evidence["near_zero_step"]


def test_a_loss_that_leaves_its_start_in_the_first_steps_and_never_comes_back_is_divergence():
    rng = np.random.default_rng(47)
    n = 400
    st = steps(n, 1)
    loss = 1.8 + 2.0 * np.exp(-np.arange(n) / 60.0) + rng.normal(0, 0.1, n)  # a blow-up that partly settles
    loss[:4] = [0.33, 0.31, 0.38, 0.35]  # the base model before the learning rate reached its peak
    loss[10:40] += 15.0
    (f,) = detect_divergence(metrics(st, loss=loss), TH)
    assert (f.severity, f.step, f.evidence["from_start"]) == ("error", st[4], True)
    # the same start with a bump that comes back under 1.5x the start is no divergence
    calm = 0.3 + 0.05 * np.exp(-np.arange(n) / 60.0) + rng.normal(0, 0.01, n)
    calm[10:40] += 1.0
    assert detect_divergence(metrics(st, loss=calm), TH) == []


def dpo_run(n: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Steps, loss, grad_norm and margins of a DPO run whose loss leaves ln 2 and whose grad_norm falls 40-fold
    as the pairs are learned."""
    rng = np.random.default_rng(48)
    st = steps(n, 1)
    grad = 20.0 * np.exp(-np.arange(n) / 30.0) + 0.5 + rng.normal(0, 0.05, n)
    loss = 0.6931 * np.exp(-np.arange(n) / 40.0) + 0.05
    return st, loss, grad, {"rewards/margins": np.linspace(0, 5, n)}


def grad_spikes_of(st: np.ndarray, loss: np.ndarray, grad: np.ndarray, extra: dict) -> list[Finding]:
    return [f for f in analyze_metrics(metrics(st, loss=loss, grad_norm=grad, **extra), TH) if f.kind == "grad_norm_spike"]


def test_lone_clipped_grad_norm_jumps_the_loss_never_felt_are_the_heavy_tail():
    """fyh2001/megatron-sft-recipes (a 26B MoE, logged every step, judged healthy): grad_norm 4-66 with lone jumps to
    251, 390, 790 and 230 that the loss never felt; VERDICTS.md: heavy-tailed grad_norm on a stable loss is
    healthy. A jump that stays up, or one far beyond the run's own early range, is still a warning."""
    n = 300
    st = steps(n)
    grad = noisy_grad_norm(n, 61, level=10.0, sigma=0.5)
    grad[:20] = np.linspace(66.0, 12.0, 20)
    for at, value in ((35, 251.0), (56, 390.0), (59, 790.0), (102, 240.0), (200, 230.0), (290, 110.0)):
        grad[at] = value
    loss = decaying_loss(n, 61, start=2.0, end=1.15)
    found = detect_grad_norm_spikes(metrics(st, loss=loss, grad_norm=grad), TH)
    assert found and all(f.severity == "info" for f in found)
    stays = grad.copy()
    stays[150:156] = 400.0  # up for six points
    assert any(f.severity == "warning" for f in detect_grad_norm_spikes(metrics(st, loss=loss, grad_norm=stays), TH))
    beyond = grad.copy()
    beyond[150] = 5000.0  # 75x the run's first steps
    assert any(f.severity == "warning" for f in detect_grad_norm_spikes(metrics(st, loss=loss, grad_norm=beyond), TH))


def test_dpo_grad_norm_outliers_no_larger_than_its_first_steps_are_info_and_a_real_blow_up_is_not():
    st, loss, grad, margins = dpo_run()
    grad[[90, 120, 150, 175, 190]] = [30.0, 28.0, 35.0, 25.0, 40.0]  # batches with a misranked pair
    found = grad_spikes_of(st, loss, grad, margins)
    assert found and all(f.severity == "info" and f.evidence.get("within_early_range") for f in found)
    grad[150] = 400.0  # twenty times its first steps: worth a look
    assert any(f.severity == "warning" for f in grad_spikes_of(st, loss, grad, margins))


def test_a_dpo_grad_norm_outlier_that_lifts_the_loss_back_to_its_start_or_stays_up_is_still_a_warning():
    st, loss, grad, margins = dpo_run()
    grad[150] = 35.0
    lifted = loss.copy()
    lifted[150:160] = 0.9  # the loss stays back above where the run started: the policy was set back
    assert [f.severity for f in grad_spikes_of(st, lifted, grad, margins)] == ["warning"]
    grad[150:] = 30.0 + np.random.default_rng(1).normal(0, 0.5, len(st) - 150)  # up at its first steps' level, for good
    found = grad_spikes_of(st, loss, grad, margins)
    assert found and not any(f.evidence.get("within_early_range") for f in found)


def test_an_rl_log_is_judged_learning_by_its_reward_not_its_loss():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    rng = np.random.default_rng(49)
    n = 100
    st = steps(n, 2)
    loss = rng.normal(0, 1e-4, n)  # GRPO's loss sits near 0 by construction
    flat = metrics(st, loss=loss, reward=1.8 + rng.normal(0, 0.15, n), reward_std=np.full(n, 0.4))
    (f,) = detect_no_learning_evidence(flat, TH)
    assert f.severity == "warning" and f.metric == "reward" and "reward did not rise" in f.message
    rising = metrics(st, loss=loss, reward=np.linspace(0.2, 0.9, n) + rng.normal(0, 0.15, n), reward_std=np.full(n, 0.4))
    assert detect_no_learning_evidence(rising, TH) == []


def test_a_legacy_ppo_log_without_a_loss_is_judged_by_its_scores():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown

    rng = np.random.default_rng(60)
    n = 80
    st = steps(n, 1)
    rising = metrics(st, **{"ppo/mean_scores": np.linspace(-1.0, 1.5, n) + rng.normal(0, 0.3, n),
                            "objective/kl": np.linspace(0, 4, n)})
    assert detect_no_learning_evidence(rising, TH) == []
    assert learning_shown(rising, TH).metric == "ppo/mean_scores"
    flat = metrics(st, **{"ppo/mean_scores": rng.normal(0.2, 0.3, n), "objective/kl": np.linspace(0, 4, n)})
    (f,) = detect_no_learning_evidence(flat, TH)
    assert f.metric == "ppo/mean_scores" and "reward did not rise" in f.message


def test_a_loss_that_falls_at_each_epoch_start_and_settles_under_0_1_is_memorization():
    from forensics.analyzers.memorization import falls_at_epoch_starts

    rng = np.random.default_rng(50)
    per_epoch, n_epochs = 100, 8
    levels = 1.5 * 0.6 ** np.arange(n_epochs)  # flat within an epoch, a step down at each start
    loss = np.repeat(levels, per_epoch) * np.exp(rng.normal(0, 0.05, per_epoch * n_epochs)) + 0.04
    st = steps(per_epoch * n_epochs, 1)
    epoch = np.arange(per_epoch * n_epochs) / per_epoch
    m = metrics(st, loss=loss, epoch=epoch)
    assert falls_at_epoch_starts(m["loss"], m["epoch"])
    (f,) = [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"]
    assert f.evidence["level"] == TH.memorization_level_many_epochs and "start of each epoch" in f.message
    smooth = decaying_loss(per_epoch * n_epochs, 51, start=1.5, end=0.05, tau=150.0)  # the same fall, no steps
    assert not falls_at_epoch_starts(pd.Series(smooth, index=st), m["epoch"])
    # an epoch logged at none of the loss's steps (the loss at even steps, the epoch at odd ones) still counts
    assert falls_at_epoch_starts(pd.Series(loss, index=2 * st), pd.Series(epoch[::5], index=2 * st[::5] - 1))


def test_a_phase_that_memorized_before_a_learning_rate_restart_is_found():
    n = 300
    st = steps(n, 1)
    phase1 = decaying_loss(150, 52, start=1.7, end=0.009, tau=20.0)
    phase2 = decaying_loss(150, 53, start=1.1, end=0.3, tau=40.0)  # new data: not memorized by its end
    lr = np.concatenate([np.linspace(0, 2e-4, 150), [0.0], np.linspace(2e-5, 1e-4, 149)])
    m = metrics(st, loss=np.concatenate([phase1, phase2]), learning_rate=lr, epoch=np.arange(1, n + 1, dtype=float))
    (f,) = [f for f in detect_loss_collapse(m, TH) if f.kind == "memorization"]
    assert f.step < 150 and f.end_step == st[149] and f.evidence["to_end"] is False


def test_a_memorized_run_s_tiny_loss_and_grad_bumps_are_not_incidents_but_three_rising_evals_are():
    rng = np.random.default_rng(54)
    n = 600
    st = steps(n, 5)
    loss = np.maximum(5.0 * np.exp(-np.arange(n) / 40.0), 1e-3) * np.exp(rng.normal(0, 0.3, n))
    grad = np.maximum(400.0 * np.exp(-np.arange(n) / 30.0), 0.01) * np.exp(rng.normal(0, 0.2, n))
    loss[[400, 450, 500]] = [0.05, 0.04, 0.06]  # 50x a median of 1e-3, but 0.05 nats
    grad[[380, 420, 470, 520]] = [20.0, 25.0, 15.0, 30.0]  # 2000x a median of 0.01, no larger than the start
    m = metrics(st, loss=loss, grad_norm=grad)
    m["eval_loss"] = pd.Series({1000: 0.46, 2000: 0.534, 3000: 0.534})
    found = analyze_metrics(m, TH)
    assert not [f for f in found if f.kind == "loss_spike"]
    assert all(f.severity == "info" for f in found if f.kind == "grad_norm_spike")
    (over,) = [f for f in found if f.severity == "warning"]
    assert (over.kind, over.step, over.evidence["best_step"]) == ("overfitting", 2000, 1000)
    # larger than anything since the first steps, and over 15x their highest (about 400): beyond the run's own range,
    # a real spike whatever the loss did (5000 was a warning only through the 0.05-nat bumps inside its storm)
    grad[550] = 20000.0
    found = analyze_metrics(dict(m, grad_norm=pd.Series(grad, index=st)), TH)
    (spike,) = [f for f in found if f.kind == "grad_norm_spike" and f.severity == "warning"]
    assert spike.evidence["peak"] == 20000.0


def test_a_loss_that_is_nan_from_the_first_step_reaches_every_detector_without_error():
    n = 20
    m = metrics(steps(n, 1), loss=np.full(n, NAN), epoch=np.linspace(0.1, 2.0, n), learning_rate=np.full(n, 1e-4))
    found = analyze_metrics(m, TH)
    assert [f.kind for f in found if f.severity == "error"] == ["nonfinite_metric"]


def test_a_short_log_that_rises_from_its_first_point_into_nan_diverged_first():
    loss = np.array([5.47, 7.25, 8.04, 8.47, 8.18, 9.55, 9.52, 8.99] + [NAN] * 12)
    found = analyze_metrics(metrics(steps(20, 1), loss=loss), TH)
    first = first_incident_of(found)
    assert (first.kind, first.step) == ("divergence", 5)
    assert [f.kind for f in found if f.severity == "error"] == ["divergence", "nonfinite_metric"]
    falling = np.array([5.47, 5.1, 4.9, 4.6, 4.4, 4.3, 4.1, 4.0] + [NAN] * 12)
    assert [f.kind for f in analyze_metrics(metrics(steps(20, 1), loss=falling), TH)] == ["nonfinite_metric"]
    # a short finite log whose first batch happened to be easy is no divergence
    lucky_start = np.array([0.8, 1.4, 1.5, 1.35, 1.45, 1.3, 1.4, 1.35, 1.3, 1.25])
    assert detect_divergence(metrics(steps(10, 1), loss=lucky_start), TH) == []


def test_a_fresh_head_loss_that_jumps_to_20_and_mixes_exact_zeros_is_broken_from_the_jump():
    # issue 11: loss ~10.3 (about ln of the vocabulary), then exact 0.0 mixed with ~20, no grad_norm logged
    rng = np.random.default_rng(55)
    n = 60
    st = steps(n, 10)
    loss = 10.3 + rng.normal(0, 0.02, n)
    loss[20:] = np.where(rng.random(40) < 0.6, 0.0, 20 + rng.normal(0, 1.5, 40))
    loss[20] = 21.0
    found = analyze_metrics(metrics(st, loss=loss, learning_rate=np.full(n, 2e-4)), TH)
    assert status_of(found) == "broken"
    assert (first_incident_of(found).kind, first_incident_of(found).step) == ("divergence", st[20])
    (masked,) = [f for f in found if f.kind == "masked_nan_loss"]
    assert masked.evidence["grad_norm"] is None and "most likely NaN" in masked.message
    # the same zeros after a loss of 2 (a real, if odd, loss) are not called NaN
    low = np.where(loss == 0.0, 0.0, 2.0)
    assert not [f for f in analyze_metrics(metrics(st, loss=low), TH) if f.kind == "masked_nan_loss"]


def blow_up_run(seed: int, at: int, n: int = 400) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps, loss and grad_norm of a run whose grad_norm jumps 30x at point `at` and stays there, while the
    loss jumps from 1.35 and falls only part of the way back (to 1.8)."""
    rng = np.random.default_rng(seed)
    st = steps(n, 5)
    loss = 1.35 + rng.normal(0, 0.05, n)
    loss[at:] = 1.8 + 3.0 * np.exp(-np.arange(n - at) / 40.0) + rng.normal(0, 0.05, n - at)
    grad = 2.0 * np.exp(rng.normal(0, 0.2, n))
    grad[at:] = 60.0 * np.exp(rng.normal(0, 0.5, n - at))
    return st, loss, grad


def test_a_blow_up_the_loss_came_part_way_back_from_but_grad_norm_never_did_is_divergence():
    st, loss, grad = blow_up_run(57, 100)
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert (f.severity, f.step) == ("error", st[100]) and f.evidence["grad_norm_end"] > 10 * f.evidence["grad_norm_early"]
    settled = grad.copy()
    settled[200:] = 2.0  # grad_norm back to its level: not this rule (no error; the loss held 1.33x its level
    # before the jump to the end, which the sustained step-up rule names as a warning)
    assert [f.severity for f in detect_divergence(metrics(st, loss=loss, grad_norm=settled), TH)] in ([], ["warning"])


def test_a_short_log_whose_grad_norm_blew_up_for_good_while_its_loss_left_its_low_diverged():
    """crystal-text-llm issue 6's shape: ten points, grad_norm 0.25 -> 7-23 from the fifth on, the loss 0.48 -> 0.82."""
    st = steps(10, 1)
    loss = np.array([1.36, 0.48, 0.58, 0.70, 0.66, 1.04, 0.66, 0.68, 0.86, 0.82])
    grad = np.array([0.24, 0.27, 1.36, 1.28, 17.2, 7.1, 21.8, 23.0, 3.8, 14.4])
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert (f.severity, f.step, f.evidence["grad_norm_jump_step"]) == ("error", st[4], st[4])
    settled = grad.copy()
    settled[-3:] = 0.3  # grad_norm came back down: a spike, not this rule
    assert detect_divergence(metrics(st, loss=loss, grad_norm=settled), TH) == []
    learning = np.array([1.36, 0.98, 0.80, 0.70, 0.66, 0.60, 0.58, 0.55, 0.52, 0.50])  # grad_norm grew, loss fell
    assert detect_divergence(metrics(st, loss=learning, grad_norm=grad), TH) == []


def test_an_unrecovered_blow_up_is_dated_at_the_jump_that_stayed_not_an_earlier_one_that_recovered():
    st, loss, grad = blow_up_run(58, 250)
    grad[100:104] = 80.0  # a blow-up the run came back from
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert f.step == st[250]


def test_an_unrecovered_blow_up_compares_the_end_with_the_loss_just_before_the_jump():
    # the loss fell 4.0 -> 1.0 before the jump and ends at 1.5: worse than just before (1.5x), though
    # under the median of everything before the jump
    rng = np.random.default_rng(59)
    n = 400
    st = steps(n, 5)
    loss = 1.0 + 3.0 * np.exp(-np.arange(n) / 60.0) + rng.normal(0, 0.02, n)
    loss[300:] = 1.5 + rng.normal(0, 0.02, 100)
    grad = 2.0 * np.exp(rng.normal(0, 0.2, n))
    grad[300:] = 60.0 * np.exp(rng.normal(0, 0.3, 100))
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert f.step == st[300] and f.evidence["floor"] < 1.1


def test_grpo_groups_that_stop_differing_after_a_live_start_with_the_reward_stuck_are_no_learning_signal():
    n = 60
    st = steps(n, 10)
    zero_std = np.where(np.arange(n) < 6, 0.45, 1.0)
    stuck = np.where(np.arange(n) < 6, 0.054, 0.07) - np.where(np.arange(n) % 7 == 0, 0.003, 0.0)
    m = metrics(st, loss=np.zeros(n), reward=stuck, reward_std=np.where(zero_std < 1, 0.02, 0.0),
                frac_reward_zero_std=zero_std, grad_norm=np.where(np.arange(n) < 6, 0.25, 0.0004))
    (f,) = [f for f in analyze_metrics(m, TH) if f.severity == "error"]
    assert (f.kind, f.step) == ("no_learning_signal", st[6])
    # groups that all pass or all fail, the reward moving between them: not stuck, no error
    moving = dict(m, reward=pd.Series(np.where(np.arange(n) % 2 == 0, 1.0, 3.0), index=st))
    assert not [f for f in analyze_metrics(moving, TH) if f.severity == "error"]


def test_grpo_groups_that_stop_differing_at_the_top_reward_after_a_clear_rise_are_saturated_not_dead():
    n = 60
    st = steps(n, 10)
    live = np.arange(n) < 15
    reward = np.where(live, np.linspace(0.2, 2.0, n), 2.0)  # rose 0.2 -> 2.0, then every completion scores 2.0
    m = metrics(st, loss=np.zeros(n), reward=reward, reward_std=np.where(live, 0.5, 0.0),
                frac_reward_zero_std=np.where(live, 0.3, 1.0), grad_norm=np.where(live, 0.3, 0.0003))
    found = analyze_metrics(m, TH)
    assert not [f for f in found if f.severity == "error"]
    (f,) = [f for f in found if f.kind == "reward_saturated"]
    assert (f.severity, f.step) == ("warning", st[15])


def test_grpo_saturating_at_its_top_reward_with_a_wide_group_spread_and_a_few_live_steps_is_saturated():
    """ps-research's GRPO: four rewards summing to at most 10.5, within-group std about 5.5 early on; the reward
    rose 3.6 -> 10.5 in 40 steps and then scored 10.5 on every completion at most steps (grad_norm 0.006, the KL
    term only), the few steps whose groups still differ at their ordinary grad_norm of 1-11."""
    rng = np.random.default_rng(7)
    n = 300
    st = steps(n, 1)
    live = (np.arange(n) < 40) | (rng.uniform(size=n) < 0.15)
    reward = np.concatenate([np.linspace(3.6, 10.5, 40), np.full(n - 40, 10.5)])
    reward[live & (np.arange(n) >= 40)] = 8.0  # a prompt not every completion solves
    m = metrics(st, loss=np.full(n, 0.005), reward=reward, reward_std=np.where(live, 5.5, 0.0),
                frac_reward_zero_std=np.where(live, 0.5, 1.0),
                grad_norm=np.where(live, rng.uniform(1, 11, n), rng.uniform(0.005, 0.02, n)))
    found = analyze_metrics(m, TH)
    (f,) = [f for f in found if f.kind == "reward_saturated"]
    assert f.severity == "warning" and 35 <= f.step <= 45
    assert not [f for f in found if f.kind == "grad_norm_spike" and f.severity != "info"]
    # the KL term blowing up at the no-spread steps is news, not a KL-only gradient to leave out
    grad = m["grad_norm"].to_numpy().copy()
    grad[250:] = np.where(live[250:], grad[250:], np.geomspace(2000, 8000, n - 250))
    found = analyze_metrics(dict(m, grad_norm=pd.Series(grad, index=st)), TH)
    assert [f for f in found if f.kind == "grad_norm_spike" and f.severity == "warning"]


def test_grpo_groups_stuck_at_a_steady_level_short_of_two_early_stds_are_no_learning_signal_not_saturation():
    """A pass/fail reward (within-group std 0.35) rising 0.1 -> 0.6 and then no group differing, the mean as steady as
    prompts that always pass beside prompts that always fail: no signal left, not a top score earned everywhere."""
    rng = np.random.default_rng(3)
    n = 120
    st = steps(n, 1)
    reward = np.r_[np.linspace(0.1, 0.6, 30) + rng.normal(0, 0.01, 30), 0.6 + rng.normal(0, 0.004, n - 30)]
    m = metrics(st, loss=np.zeros(n), reward=reward, reward_std=np.r_[np.full(30, 0.35), np.zeros(n - 30)],
                frac_reward_zero_std=np.r_[np.full(30, 0.3), np.ones(n - 30)],
                grad_norm=np.r_[np.full(30, 0.3), np.full(n - 30, 0.002)])
    found = analyze_metrics(m, TH)
    assert [f.kind for f in found if f.severity == "error"] == ["no_learning_signal"]
    assert not [f for f in found if f.kind == "reward_saturated"]


def test_in_an_rl_log_a_zero_grad_norm_is_no_skipped_step_and_a_spike_the_reward_rides_through_is_info():
    rng = np.random.default_rng(59)
    n = 250
    st = steps(n, 1)
    grad = 0.4 * np.exp(rng.normal(0, 0.3, n))
    grad[[30, 90, 150]] = 0.0  # groups that all scored alike
    grad[84] = 4.86  # 12x the run's median
    m = metrics(st, loss=rng.normal(0, 1e-3, n), reward=np.linspace(0.2, 1.7, n) + rng.normal(0, 0.2, n),
                reward_std=np.full(n, 0.5), grad_norm=grad)
    found = analyze_metrics(m, TH)
    assert not [f for f in found if f.kind == "skipped_steps"]
    assert all(f.severity == "info" for f in found if f.kind == "grad_norm_spike")
    grad[84:120] = 4.86  # up at 12x for 36 steps: not one swing of the groups' spread
    found = analyze_metrics(dict(m, grad_norm=pd.Series(grad, index=st)), TH)
    assert any(f.severity == "warning" for f in found if f.kind == "grad_norm_spike")


def test_a_grad_norm_that_moves_between_two_levels_from_its_first_point_has_no_early_spike():
    """LIU-Hao's TRL GRPO: 0.00018 at step 10, then 0.206, 0.215, 1.7e-05, 0.186, ...: judged against its first
    point, the second looked 1137x up; the low points are steps with next to no gradient, not a level it left."""
    from forensics.analyzers.grad_spike import detect_grad_norm_spikes
    st = steps(10, 10)
    grad = np.array([1.8e-4, 0.206, 0.215, 1.7e-5, 0.186, 3.4e-5, 0.194, 0.155, 1.8e-5, 0.212])
    (f,) = detect_grad_norm_spikes(metrics(st, loss=np.full(10, 2.0), grad_norm=grad), TH)
    assert (f.step, f.severity, f.evidence["two_levels"]) == (20, "info", True)
    up = grad.copy()
    up[[3, 5, 8]] = 0.2  # the low level never comes back: the first point was the run's level, then it jumped
    up[0] = 0.002
    (f,) = detect_grad_norm_spikes(metrics(st, loss=np.full(10, 2.0), grad_norm=up), TH)
    assert f.severity == "warning"
    once = up.copy()
    once[6] = 0.003  # one low point later: a jump that stayed, with one quiet step, not two levels
    (f,) = detect_grad_norm_spikes(metrics(st, loss=np.full(10, 2.0), grad_norm=once), TH)
    assert f.severity == "warning"


def test_a_dpo_loss_at_zero_with_a_vanished_gradient_is_saturated_pairs():
    st = np.array([1, 10, 20, 30])
    m = metrics(st, loss=[0.6931, 0.163, 0.0, 0.0], grad_norm=[1628.0, 0.0139, 1.7e-8, 8.1e-8],
                **{"rewards/margins": [0.0, 26.7, 119.6, 141.7], "logps/chosen": [-21.7, -22.4, -23.1, -23.8],
                   "logps/rejected": [-433.1, -631.7, -1540.5, -1784.1]})
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "loss_collapse"]
    assert (f.severity, f.step, f.evidence["saturated_pairs"]) == ("warning", 20, True) and "-1784" in f.message
    learning = dict(m, loss=pd.Series([0.6931, 0.5, 0.35, 0.3], index=st), grad_norm=pd.Series([20.0, 9, 8, 7.0], index=st))
    assert not [f for f in analyze_metrics(learning, TH) if f.kind == "loss_collapse"]


def test_an_eval_only_log_with_two_points_is_not_evidence_of_learning():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    (f,) = detect_no_learning_evidence(metrics(np.array([4, 8]), eval_loss=[6.55, 4.62]), TH)
    assert f.severity == "warning" and "no training loss" in f.message
    many = metrics(steps(10, 10), eval_loss=np.linspace(3.0, 2.0, 10))
    assert detect_no_learning_evidence(many, TH) == []


def test_a_log_with_no_loss_at_all_is_a_warning_naming_what_it_holds():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    (f,) = detect_no_learning_evidence(metrics(steps(10, 10), learning_rate=np.full(10, 1e-4)), TH)
    assert f.severity == "warning" and "no loss" in f.message and "learning_rate" in f.message
    (empty,) = detect_no_learning_evidence({}, TH)
    assert empty.severity == "warning" and "no metric at all" in empty.message
    rewards = metrics(steps(10, 10), **{"rewards/chosen": np.linspace(0, 1, 10)})
    assert detect_no_learning_evidence(rewards, TH) == []  # judged by never_learned


def test_a_loss_that_moves_within_its_noise_is_not_evidence_of_learning():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    rng = np.random.default_rng(39)
    n = 100
    flat = 2.15 - np.linspace(0, 0.05, n) + rng.normal(0, 0.1, n)
    flat[0] = 2.25
    assert [f.kind for f in detect_no_learning_evidence(metrics(steps(n, 10), loss=flat), TH)] == ["no_learning_evidence"]
    short = np.array([3.26, 3.17, 3.19, 3.11, 3.19, 3.08, 3.07, 3.02, 2.92, 2.95, 3.02, 3.0])
    assert detect_no_learning_evidence(metrics(steps(12, 10), loss=short), TH) == []


def test_single_step_loss_jumps_on_a_steady_big_batch_loss_are_spikes_not_batch_noise():
    """modded-nanogpt's 1.5B run: a per-step loss with ~6% point-to-point spread jumps 1.5-1.9x for one step, again
    and again. No batch of half a million tokens is that hard: warnings. The same jumps on a small-batch loss that
    spreads 30% a step are its noise, and a steady loss without them raises nothing."""
    from forensics.analyzers.loss_spike import detect_loss_spikes

    rng = np.random.default_rng(71)
    n = 2000
    st = steps(n, 1)
    steady = 3.0 * np.exp(rng.normal(0, 0.04, n))
    assert detect_loss_spikes(metrics(st, loss=steady), TH) == []
    jumps = steady.copy()
    jumps[[500, 900, 1400]] *= 1.7
    found = detect_loss_spikes(metrics(st, loss=jumps), TH)
    assert [(f.severity, f.step) for f in found] == [("warning", st[500]), ("warning", st[900]), ("warning", st[1400])]
    noisy = 3.0 * np.exp(rng.normal(0, 0.3, n))
    noisy[[500, 900, 1400]] *= 1.7
    assert all(f.severity == "info" for f in detect_loss_spikes(metrics(st, loss=noisy), TH))


def test_a_sudden_drop_to_exactly_0_with_no_grad_norm_logged_is_a_warning_that_says_what_would_tell():
    """Shaharak88 (LLaMA-Factory): 0.4666 at step 10, then 0.0, 0.0, 0.0 and no grad_norm: a NaN hidden by the
    filter, masked labels or an exact fit, which the log cannot tell apart (issue 11, VERDICTS.md)."""
    st = np.array([10, 20, 30, 40])
    found = detect_loss_collapse(metrics(st, loss=np.array([0.4666, 0.0, 0.0, 0.0])), TH)
    assert [(f.kind, f.severity, f.step) for f in found] == [("zero_loss_unexplained", "warning", 20)]
    assert "logging_nan_inf_filter" in found[0].message
    with_grad = detect_loss_collapse(metrics(st, loss=np.array([0.4666, 0.0, 0.0, 0.0]),
                                             grad_norm=np.array([1.2, float("nan"), float("nan"), float("nan")])), TH)
    assert "zero_loss_unexplained" not in [f.kind for f in with_grad]  # a NaN grad_norm tells: not this warning


def test_single_windows_with_loss_and_grad_norm_both_0_in_a_learning_run_are_unexplained_zeros():
    """cloud-zhoubingye's ChatGLM3 LoRA: four logged windows at exactly 0 / 0 among losses of about 0.2, in a fifth
    of an epoch (no memorization), and grad_norm 0 at more than half the steps."""
    from forensics.analyzers.skipped_steps import detect_zero_grad_steps

    n = 60
    st = steps(n, 10)
    loss = 0.2 + 0.05 * np.sin(np.arange(n))
    grad = np.where(np.arange(n) % 3 != 2, 0.0, 5.0)  # 0 at two of three steps
    loss[[12, 30]] = 0.0  # at two of the steps whose grad_norm is 0
    (f,) = detect_zero_grad_steps(metrics(st, loss=loss, grad_norm=grad), TH)
    assert (f.kind, f.severity, f.step, f.evidence["steps"]) == ("zero_loss_unexplained", "warning", st[12],
                                                                 [int(st[12]), int(st[30])])
    assert "more than half the updates" in f.message
    to_the_end = loss.copy()
    to_the_end[-3:] = 0.0
    grad_end = grad.copy()
    grad_end[-3:] = 0.0
    assert [f.kind for f in detect_zero_grad_steps(metrics(st, loss=to_the_end, grad_norm=grad_end), TH)] == []


def test_memorization_is_dated_halfway_down_its_descent_on_a_log_scale_not_at_its_first_drop():
    """MERCATOR / guohuiyuan: a fine-tune's loss drops from 2.4 to 0.3 in its first steps and then takes epochs to
    reach ~0.001; on a linear scale it 'levelled off' at 0.3 (step 15), on a log scale it is halfway down at ~0.03."""
    n = 300
    st = steps(n, 5)
    loss = 2.4 * np.exp(-np.arange(n) / 3.0) + 0.3 * np.exp(-np.arange(n) / 40.0) + 0.0008
    (f,) = [f for f in detect_loss_collapse(metrics(st, loss=loss, epoch=np.linspace(0.1, 30.0, n)), TH)
            if f.kind == "memorization"]
    assert 0.01 < loss[list(st).index(f.step)] < 0.1 and f.step > st[20]


def test_a_renamed_llamafactory_log_is_still_llamafactorys(tmp_path):
    (tmp_path / "trainer_log_exp63.jsonl").write_text("".join(
        f'{{"current_steps": {s}, "total_steps": 50, "loss": {2 - s / 50:.4f}, "lr": 1e-4, "epoch": {s / 10}}}\n'
        for s in range(10, 60, 10)))
    from forensics.discover.run import discover
    assert [p.name for p in discover(tmp_path).llamafactory_logs] == ["trainer_log_exp63.jsonl"]


def test_two_logged_window_means_that_fell_by_a_quarter_show_learning_and_two_close_points_do_not():
    """mkcomer237/llm_fine_tuning: two losses, each the mean of 50 steps, 0.352 -> 0.198."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    assert detect_no_learning_evidence(metrics(np.array([50, 100]), loss=np.array([0.3523, 0.1981])), TH) == []
    for st, loss in ((np.array([50, 100]), np.array([0.3523, 0.30])),  # a 15% fall of two points: too little to tell
                     (np.array([1, 2]), np.array([0.3523, 0.1981]))):  # two single steps: no means at all
        assert [f.kind for f in detect_no_learning_evidence(metrics(st, loss=loss), TH)] == ["no_learning_evidence"]


def test_a_loss_that_dropped_to_a_new_level_early_and_stayed_there_noisily_learned():
    """Ubaidb936/runPodFineTuning checkpoint-20: 2.13 twice, then down to 0.9-1.7 for the other 18 steps; its last
    two points alone are within the per-step noise of the first two, but all eighteen after them are not."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    loss = np.array([2.1267, 2.1282, 1.6098, 1.0996, 0.9144, 1.1428, 1.58, 1.2715, 1.1285, 1.1325, 1.308, 1.6827,
                     0.8762, 0.8922, 1.2377, 1.57, 1.0014, 1.2728, 0.9602, 1.0243])
    assert detect_no_learning_evidence(metrics(steps(20, 1), loss=loss), TH) == []
    back_up = loss.copy()
    back_up[-2:] = 2.12  # the same drop, but back where it started at the end: no evidence
    assert [f.kind for f in detect_no_learning_evidence(metrics(steps(20, 1), loss=back_up), TH)] == ["no_learning_evidence"]


def test_an_eval_loss_that_climbs_with_noise_to_15_percent_above_its_best_is_overfitting():
    n = 30
    st = steps(n, 100)
    train = decaying_loss(n, 40, start=4.0, end=0.6, tau=10.0)
    best = 1.78
    evals = np.concatenate([np.linspace(2.0, best, 6), best * np.array(
        [1.01, 1.03, 1.02, 1.05, 1.06, 1.08, 1.07, 1.10, 1.12, 1.11, 1.13, 1.15, 1.14, 1.16, 1.17, 1.16, 1.18,
         1.17, 1.19, 1.18, 1.20, 1.19, 1.21, 1.20])])
    (f,) = [f for f in analyze_metrics(metrics(st, loss=train, eval_loss=evals), TH) if f.kind == "overfitting"]
    assert (f.step, f.evidence["best_step"]) == (st[6], st[5])
    noisy_flat = best * (1 + 0.04 * np.sin(np.arange(n)))
    assert not [f for f in analyze_metrics(metrics(st, loss=train, eval_loss=noisy_flat), TH) if f.kind == "overfitting"]


def test_grpo_groups_with_no_reward_spread_are_no_learning_signal_and_a_rising_reward_is_not():
    from forensics.analyzers.dead_reward import detect_dead_reward_signal

    n = 100
    st = steps(n)
    live = np.zeros(n, dtype=bool)
    live[[0, 1, 8, 9, 10, 40, 70]] = True
    frac = np.where(live, 0.75, 1.0)
    reward = np.where(live, 0.0625, 0.0)
    (f,) = detect_dead_reward_signal(metrics(st, frac_reward_zero_std=frac, reward=reward,
                                             grad_norm=np.where(live, 0.08, 0.0008)), TH)
    assert (f.kind, f.severity, f.step) == ("no_learning_signal", "error", st[2])
    healthy = metrics(st, frac_reward_zero_std=np.full(n, 0.2), reward=np.linspace(0.2, 0.8, n))
    assert detect_dead_reward_signal(healthy, TH) == []


def test_after_many_epochs_a_loss_settled_under_0_1_without_eval_is_memorization():
    n = 200
    st = steps(n, 10)
    loss = decaying_loss(n, 41, start=3.0, end=0.05, tau=30.0, noise=0.05)
    few = metrics(st, loss=loss, epoch=np.linspace(0.1, 3.0, n))
    assert not [f for f in detect_loss_collapse(few, TH) if f.kind == "memorization"]
    many = metrics(st, loss=loss, epoch=np.linspace(0.2, 24.0, n))
    (f,) = [f for f in detect_loss_collapse(many, TH) if f.kind == "memorization"]
    assert f.evidence["level"] == TH.memorization_level_many_epochs and f.end_step == st[-1]


def test_a_loss_spike_on_a_skipped_step_is_linked_to_the_skipped_steps_finding_that_holds_that_step():
    from forensics.analyzers.chain import link_skipped_batches

    scaler = Finding("skipped_steps", "warning", 10, "skipped", evidence={"steps": [10, 11]})
    megatron = Finding("skipped_steps", "warning", 500, "skipped", evidence={"steps": [500]})
    spike = Finding("loss_spike", "warning", 500, "spike")
    unrelated = Finding("loss_spike", "warning", 300, "spike")
    linked = link_skipped_batches([scaler, megatron, spike, unrelated])
    assert linked[2].caused_by == megatron.key and linked[3].caused_by is None


def test_a_schedule_that_runs_down_to_zero_and_climbs_back_is_an_lr_anomaly():
    """Sustella/qwen_sapiens: a cosine over ~310 steps in a 414-step epoch: 9.67e-6 -> 7e-11 at 310, back up to
    2.55e-6 by 410. A schedule that ends at ~0, or restarts from exactly 0 with a warm-up, is not one."""
    from forensics.analyzers.lr_anomaly import detect_lr_anomalies

    st = steps(41, 10)
    t = np.clip((st - 20) / 290, 0, None)
    lr = np.where(st <= 20, 1e-5 * st / 20, 1e-5 * 0.5 * (1 + np.cos(np.pi * t))) + 1e-12
    (f,) = detect_lr_anomalies(metrics(st, learning_rate=lr), TH)
    assert (f.kind, f.severity, f.step) == ("lr_anomaly", "warning", 320) and "horizon" in f.message
    ends = np.where(st <= 20, 1e-5 * st / 20, 1e-5 * 0.5 * (1 + np.cos(np.pi * np.clip((st - 20) / 390, 0, 1))))
    assert detect_lr_anomalies(metrics(st, learning_rate=ends), TH) == []
    # planned: a second phase that warms up and decays again, and a schedule that cycles (CyclicLR, warm restarts)
    st2 = steps(60, 10)
    phase = np.concatenate([lr[:31], np.linspace(2e-7, 8e-6, 9), np.linspace(8e-6, 1e-7, 20)])
    assert detect_lr_anomalies(metrics(st2, learning_rate=phase), TH) == []
    cyclic = 1e-6 + 1e-4 * np.abs(((np.arange(60) / 10) % 2) - 1)
    assert detect_lr_anomalies(metrics(st2, learning_rate=cyclic), TH) == []


def test_a_model_from_scratch_settled_under_half_a_nat_without_eval_learned_its_text_by_heart(tmp_path):
    """Jayant-Guru-Shrivastava's GPT-2 on tiny Shakespeare: 8.46 -> 0.12 nats a token with no eval loss. A fine-tune
    at the same loss says nothing (templated answers are that predictable); text from scratch is not."""
    import json

    import forensics

    n = 400
    i = np.arange(n)
    loss = 0.08 + 8.34 * np.exp(-i / 90.0)  # above half its start over its first 15%: a model learning from scratch
    history = [{"step": 10 * (k + 1), "loss": float(v)} for k, v in enumerate(loss)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 10 * n, "log_history": history}))
    a = forensics.analyze(tmp_path)
    assert (a.run_profile.objective, a.status, a.first_incident.kind) == ("pretrain", "warning", "memorization")
    assert "no natural text" in a.first_incident.message
    fine_tune = tmp_path / "ft"
    fine_tune.mkdir()
    history = [{"step": 10 * (k + 1), "loss": float(v)} for k, v in enumerate(0.08 + 2.0 * np.exp(-i / 90.0))]
    (fine_tune / "trainer_state.json").write_text(json.dumps({"global_step": 10 * n, "log_history": history}))
    assert forensics.analyze(fine_tune).status == "healthy"


def test_a_schedule_that_ran_out_and_started_over_is_an_lr_anomaly():
    """marthinsurya/lab2-ID2223: a linear decay to 0 at step 60 (max_steps 60), then 2.43e-4 at step 65: the run went
    on with a new schedule. A schedule that ends at 0 at the last step, or warms up from 0 at the first, is not one."""
    from forensics.analyzers.lr_anomaly import detect_lr_anomalies

    st = steps(24, 5)
    lr = np.concatenate([np.linspace(3e-4, 0, 12), np.linspace(2.43e-4, 1e-5, 12)])
    lr[0] = 1.5e-4  # the warm-up's first point
    (f,) = detect_lr_anomalies(metrics(st, learning_rate=lr), TH)
    assert (f.kind, f.step, f.evidence["ran_out_at"]) == ("lr_anomaly", 65, 60) and "started over" in f.message
    once = np.concatenate([[0.0], np.linspace(3e-4, 0, 23)])
    assert detect_lr_anomalies(metrics(st, learning_rate=once), TH) == []
    assert detect_lr_anomalies(metrics(st[:1], learning_rate=lr[:1]), TH) == []  # one point: nothing to say
    cycles = np.tile(np.linspace(3e-4, 0, 8), 3)  # cosine_with_restarts-like: by design, at even intervals
    assert detect_lr_anomalies(metrics(st, learning_rate=cycles), TH) == []


def test_an_overfitting_message_gives_the_lowest_eval_and_the_level_around_it():
    n = 40
    st = steps(n, 100)
    loss = decaying_loss(n, 70, start=2.0, end=0.05, tau=8)
    evals = 0.5 + 0.002 * (np.arange(n) - 10) ** 2 + np.random.default_rng(70).normal(0, 0.03, n)
    evals[10] = 0.32  # one lucky low eval among noisy neighbours
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, eval_loss=evals), TH) if f.kind == "overfitting"]
    assert "lowest at step 1100 (0.32;" in f.message


# ---------------------------------------------------------------- pairwise preference: are the pairs told apart?

def _dpo(n=40, loss=None, accuracies=None, seed=3, **extra):
    rng = np.random.default_rng(seed)
    st = steps(n, 5)
    loss = np.full(n, 0.70) + rng.uniform(-0.02, 0.02, n) if loss is None else loss
    series = {"loss": loss, "rewards/margins": rng.uniform(-0.02, 0.02, n), "grad_norm": rng.uniform(5, 10, n)}
    if accuracies is not None:
        series["rewards/accuracies"] = accuracies
    return metrics(st, **series), st


def test_a_dpo_loss_that_wobbles_at_ln_2_with_chance_accuracy_is_no_evidence_of_learning():
    """A DPO log 0.68-0.72 with margins about 0 used to be called healthy: nothing fired, yet nothing learned."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
    m, _ = _dpo(accuracies=np.random.default_rng(4).uniform(0.4, 0.6, 40))
    (f,) = detect_no_learning_evidence(m, TH)
    assert f.severity == "warning" and "ln 2" in f.message and learning_shown(m, TH) is None


def test_a_dpo_loss_well_under_ln_2_or_a_risen_accuracy_is_learning():
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
    falling, _ = _dpo(loss=np.linspace(0.69, 0.45, 40))
    assert detect_no_learning_evidence(falling, TH) == [] and learning_shown(falling, TH).metric == "loss"
    risen, _ = _dpo(accuracies=np.linspace(0.35, 0.8, 40))
    assert detect_no_learning_evidence(risen, TH) == [] and learning_shown(risen, TH).metric == "rewards/accuracies"
    # hykun1989's LLaMA-Factory log: 4 pairs a batch, about 0.63 from the start to the end: not a rise
    flat = np.tile([1.0, 0.25, 0.75, 0.5, 0.75, 0.5, 0.75, 0.5], 5)
    noisy, _ = _dpo(accuracies=flat)
    assert [f.kind for f in detect_no_learning_evidence(noisy, TH)] == ["no_learning_evidence"]


def test_two_dpo_window_means_clearly_under_ln_2_are_learning_and_two_at_ln_2_or_two_single_steps_are_too_few():
    """klix18's TRL DPO logged every ten steps: 0.6781 at step 10, 0.6522 at step 20, accuracy 0.59 -> 0.64."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence

    def dpo(st, loss):
        return metrics(np.array(st), loss=np.array(loss), **{"rewards/accuracies": np.array([0.59, 0.64])})
    assert detect_no_learning_evidence(dpo([10, 20], [0.6781, 0.6522]), TH) == []
    for st, loss in (([10, 20], [0.6931, 0.6870]),  # at ln 2: the pairs are not told apart
                     ([1, 2], [0.6781, 0.6522])):  # one batch each: its noise, not a mean
        assert [f.kind for f in detect_no_learning_evidence(dpo(st, loss), TH)] == ["no_learning_evidence"]


def test_trained_pairs_told_apart_while_the_held_out_loss_stays_at_ln_2_is_a_warning():
    """linxiang-ai's LLaMA-Factory DPO: training pair accuracy 0.3 -> 0.7, held-out loss 0.684, 0.671, 0.676."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    m, st = _dpo(accuracies=np.linspace(0.3, 0.75, 40))
    m["eval_loss"] = pd.Series([0.684, 0.671, 0.676], index=[st[9], st[19], st[39]], dtype="float64")
    (f,) = detect_no_learning_evidence(m, TH)
    assert "held-out" in f.message and f.evidence["trained_pairs_told_apart"]
    # iiicellled's TRL DPO: held-out loss 0.687 -> 0.681 but held-out reward accuracy 0.81 -> 0.88: learned
    m["eval_rewards/accuracies"] = pd.Series([0.81, 0.88, 0.88], index=m["eval_loss"].index, dtype="float64")
    assert detect_no_learning_evidence(m, TH) == []


def test_llamafactorys_accuracy_is_the_pair_accuracy_it_copies(tmp_path):
    from forensics.ingest import llamafactory
    path = tmp_path / "trainer_log.jsonl"
    path.write_text("".join(f'{{"current_steps": {s}, "total_steps": 100, "loss": 0.69, "accuracy": 0.5, "lr": 5e-06, '
                            f'"epoch": {s / 100}, "percentage": {s}, "elapsed_time": "0:00:40"}}\n' for s in (5, 10, 15)))
    assert set(llamafactory.read(path).frame["metric"]) == {"loss", "rewards/accuracies", "learning_rate", "epoch"}


def test_a_grad_norm_blow_up_ahead_of_the_loss_dates_the_divergence_where_the_loss_left_its_level():
    """staryskylight/alpacaLora: grad_norm jumped tenfold at step 650 and never settled; the loss stayed at ~1.0
    until step 900, then rose to 2-9 and ended at 2.2: the divergence is dated where the loss left, after the jump."""
    st, loss, grad = blow_up_run(60, 250)
    loss[200:250] = 1.35  # the loss holds its level for 50 points after the gradients blew up at 200
    grad[200:] = 60.0
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert f.step == st[250] and f.evidence["grad_norm_jump_step"] == st[200] and f"step {st[200]}" in f.message


def test_a_jump_in_the_first_few_points_does_not_hide_a_later_unrecovered_blow_up():
    """staryskylight's grad_norm 2.9 at its fourth point (nothing before it to compare the loss with) used to end the
    search: the blow-up at 650 it never came back from went unseen."""
    st, loss, grad = blow_up_run(61, 250)
    grad[2] = 80.0
    (f,) = detect_divergence(metrics(st, loss=loss, grad_norm=grad), TH)
    assert f.step == st[250]


def test_a_storm_whose_first_spikes_settled_long_before_is_not_the_root_of_a_later_divergence():
    from forensics.analyzers import first_incident_of
    st, loss, grad = blow_up_run(62, 300)
    for at in (20, 80, 140, 200, 260):  # single-point spikes the run came straight back from: one storm with the
        grad[at] = 200.0                 # blow-up at 300 that it never came back from
    found = analyze_metrics(metrics(st, loss=loss, grad_norm=grad), TH)
    first = first_incident_of(found)
    # the blow-up at 300 itself (its grad_norm jump, or the divergence it led to), not the storm dated at 20
    assert first.step == st[300] and first.kind in ("divergence", "grad_norm_spike"), \
        [(f.kind, f.step, f.caused_by) for f in found]


def test_a_dpo_loss_saturated_from_its_first_point_with_its_gradient_scaled_away_is_saturated_pairs():
    """JonOlsenCa's LLaMA-Factory DPO: 0.0017 at step 10, 0.0 from step 60, grad_norm 1e-4 to 1.4e-3 (the sigmoid's
    slope, about the loss itself, scales every gradient away), accuracy 1.0 and margins of 16 at every point."""
    st = steps(17, 10)
    loss = np.array([0.0017, 0.0004] + [0.0001] * 3 + [0.0] * 12)
    grad = np.array([0.022, 0.0028, 3.5e-4, 2.5e-4, 1.1e-3] + [1.7e-4, 3.5e-4, 1.2e-4] * 4)
    m = metrics(st, loss=loss, grad_norm=grad, **{"rewards/margins": np.linspace(8.7, 16.2, 17),
                                                  "rewards/accuracies": np.ones(17)})
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "loss_collapse"]
    assert (f.severity, f.step) == ("warning", st[0])  # as judged: under 0.01 from its first point, 0.0017
    healthy = dict(m, grad_norm=pd.Series(np.full(17, 3.0), index=st))  # a live gradient: still learning from them
    assert not [f for f in analyze_metrics(healthy, TH) if f.kind == "loss_collapse"]


def test_saturated_dpo_pairs_are_dated_where_the_loss_went_under_a_hundredth_for_good_not_after_the_last_odd_batch():
    """luke-griggs's TRL DPO: 0.54, 0.16, 0.014, then 0.0039 at step 80 and never over 0.006 again, grad_norm under
    0.01 at most points from there but the odd batch still ranked wrong lifting one to 0.02-0.05 now and then:
    saturated from step 80, not from after the last such batch (step 2320)."""
    rng = np.random.default_rng(11)
    n = 120
    st = steps(n, 20)
    loss = np.concatenate([[0.5414, 0.1564, 0.0139, 0.0039, 0.0008, 0.0057], rng.uniform(0, 0.002, n - 6)])
    loss[40:] = 0.0
    grad = np.concatenate([[3.8, 0.55, 0.146, 0.163], rng.uniform(1e-7, 5e-3, n - 4)])
    grad[[10, 14, 30, 60, 90]] = [0.0197, 0.0543, 0.0394, 0.02, 0.03]  # batches still ranked wrong
    m = metrics(st, loss=loss, grad_norm=grad, **{"rewards/margins": np.linspace(12.8, 27.0, n),
                                                  "logps/rejected": np.linspace(-232, -548, n)})
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "loss_collapse"]
    assert (f.severity, f.step) == ("warning", 80)


def _dpo_passes(pass_levels, per_pass=94):
    """A TRL DPO log over len(pass_levels) epochs, logged every 10 steps, each pass's loss about its level."""
    rng = np.random.default_rng(2)
    n = per_pass * len(pass_levels)
    st = steps(n, 10)
    loss = np.repeat(pass_levels, per_pass) * np.exp(rng.normal(0, 0.3, n))
    loss[0] = 0.6931
    return metrics(st, loss=loss, epoch=np.arange(1, n + 1) / per_pass, grad_norm=np.full(n, 0.05),  # not vanished
                   **{"rewards/margins": np.linspace(0.0, 8.6, n), "rewards/accuracies": np.ones(n)})


def test_dpo_pairs_near_zero_loss_over_every_repeated_pass_without_held_out_pairs_are_memorization():
    """SteveHong1901's five-epoch DPO on GSM8K pairs, no eval: epoch medians 0.257, 0.0076, 0.0017, 0.00077, 0.00049."""
    m = _dpo_passes([0.257, 0.0076, 0.0017, 0.00077, 0.00049])
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "memorization"]
    assert (f.severity, f.step) == ("warning", 950)  # the second pass's first logged step
    held_out = dict(m, eval_loss=pd.Series([0.01, 0.008, 0.008], index=[940, 1880, 2820]))
    one_pass = _dpo_passes([0.257])
    still_learning = _dpo_passes([0.4, 0.2, 0.05])  # the later passes well above ~0
    for quiet in (held_out, one_pass, still_learning):
        assert not [f for f in analyze_metrics(quiet, TH) if f.kind == "memorization"]


def test_an_orpo_loss_that_carries_a_language_model_term_learns_by_its_fall():
    """ORPO's loss is the answer's NLL plus a pair term (1 to 3 at the start): its fall is learning even where the
    pair accuracy stays under 0.6."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence
    m, _ = _dpo(loss=np.linspace(2.4, 1.3, 40), accuracies=np.full(40, 0.55))
    m["log_odds_ratio"] = pd.Series(np.linspace(-0.8, -0.6, 40), index=m["loss"].index)
    assert detect_no_learning_evidence(m, TH) == []


def test_a_dpo_loss_falling_from_above_ln_2_while_pairs_stay_ranked_wrong_is_no_evidence_of_learning():
    """giakhanhhii's DPO (the reference is the base without the SFT adapter the policy starts from): the loss falls
    1.34 -> 1.07, but the reward accuracy stays 0.36-0.45: the policy still prefers the rejected answers."""
    from forensics.analyzers.learning_evidence import detect_no_learning_evidence, learning_shown
    rng = np.random.default_rng(5)
    m, _ = _dpo(loss=np.linspace(1.34, 1.07, 40) + rng.uniform(-0.03, 0.03, 40),
                accuracies=rng.uniform(0.36, 0.45, 40))
    (f,) = detect_no_learning_evidence(m, TH)
    assert f.evidence["pairwise"] and learning_shown(m, TH) is None
    # ORPO's pair term rides on the answer's NLL: its fall is learning whatever the pair accuracy says
    m["log_odds_ratio"] = pd.Series(np.linspace(-0.8, -0.7, 40), index=m["loss"].index)
    assert detect_no_learning_evidence(m, TH) == []


def test_zeros_while_a_decaying_learning_rate_stands_still_are_masked_nans_of_skipped_updates():
    """Hannibal0420's first attempt (fp16 QLoRA, no grad_norm logged): the linear decay stops dead at step 29 and
    never moves again; 14 of the next 45 losses are exactly 0.0 between real ones of 2.4 to 20: every update skipped."""
    st = np.arange(1, 75)
    lr = np.where(st <= 29, 2e-4 - 4e-8 * st, 2e-4 - 4e-8 * 29)
    rng = np.random.default_rng(70)
    loss = rng.uniform(8.9, 11.0, len(st))
    zeros = [32, 35, 36, 37, 40, 43, 44, 46, 48, 55, 60, 64, 65, 68]
    loss[np.isin(st, zeros)] = 0.0
    (f,) = detect_masked_nan_loss(metrics(st, loss=loss, learning_rate=lr), TH)
    assert (f.severity, f.step, f.evidence["lr_frozen_since"]) == ("error", 32, 29)
    # warm-up to a constant rate (constant_with_warmup): a standing rate is the plan, a 0.0 there is not read so
    warm = np.where(st <= 10, 2e-5 * st, 2e-4)
    assert detect_masked_nan_loss(metrics(st, loss=loss, learning_rate=warm), TH) == []


def test_an_eval_loss_climbing_at_every_evaluation_after_its_best_is_overfitting():
    """jzystar's small GPT pre-trained on one short story: the eval loss, quiet near 6.2, turns at step 65 (6.151) and
    climbs at each of the next four evaluations (6.201, 6.225, 6.269, 6.296: the first only 0.8% up) while the
    training loss falls 2.4 -> 0.9; flat wobbles of the same size, up and down, stay silent."""
    st = np.arange(0, 90, 5)
    evals = np.array([9.933, 8.340, 7.052, 6.600, 6.479, 6.411, 6.366, 6.384, 6.246, 6.231, 6.193, 6.190, 6.165,
                      6.151, 6.201, 6.225, 6.269, 6.296])
    loss = np.linspace(10.0, 0.87, len(st))
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, eval_loss=evals), TH) if f.kind == "overfitting"]
    assert (f.step, f.evidence["best_step"]) == (70, 65)
    wobble = evals.copy()
    wobble[-4:] = [6.201, 6.160, 6.229, 6.170]
    assert not [f for f in analyze_metrics(metrics(st, loss=loss, eval_loss=wobble), TH) if f.kind == "overfitting"]


def test_every_eval_after_the_best_well_above_it_is_overfitting_however_many_came_before():
    """ozguozkan's classifier, evaluated each epoch: 0.535, 0.417 (its best), then 0.551, 0.540, 0.528, all 27-32%
    above it while the training loss fell fivefold: what three evals after a four-eval log's first are judged by.
    A best followed by evals that come back near it is no such thing."""
    st = np.array([97, 194, 291, 388, 485])
    loss = np.array([0.544, 0.520, 0.275, 0.114, 0.102])
    evals = np.array([0.535, 0.417, 0.551, 0.540, 0.528])
    (f,) = [f for f in analyze_metrics(metrics(st, loss=loss, eval_loss=evals), TH) if f.kind == "overfitting"]
    assert (f.step, f.evidence["best_step"]) == (291, 194)
    back = np.array([0.535, 0.417, 0.551, 0.540, 0.430])
    assert not [f for f in analyze_metrics(metrics(st, loss=loss, eval_loss=back), TH) if f.kind == "overfitting"]


def test_an_eval_loss_drifting_up_from_its_best_over_many_evaluations_is_overfitting():
    """da4nik08's QLoRA (18 epochs, constant LR): best eval 0.817 at step 2400, then hovering 0.82-0.83 and drifting
    to 0.865 by step 4000 over 32 evaluations, while the training loss fell 0.70 -> 0.62."""
    rng = np.random.default_rng(71)
    ev_steps = np.arange(2000, 4001, 50)
    evals = np.concatenate([np.linspace(0.87, 0.82, 8), [0.8174], 0.82 + np.linspace(0, 0.045, 32)
                            + rng.normal(0, 0.004, 32)])
    st = steps(80, 50)
    m = metrics(st, loss=np.linspace(0.9, 0.62, 80))
    m["eval_loss"] = pd.Series(evals, index=ev_steps, dtype="float64")
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]
    assert (f.severity, f.evidence["best_step"]) == ("warning", 2400)
    flat = 0.82 + rng.normal(0, 0.004, 32)  # hovering near the best with no drift: not this rule
    m["eval_loss"] = pd.Series(np.concatenate([np.linspace(0.87, 0.82, 8), [0.8174], flat]), index=ev_steps)
    assert not [f for f in analyze_metrics(m, TH) if f.kind == "overfitting"]


def test_an_eval_metric_nan_to_the_end_while_training_stays_finite_is_a_broken_evaluation_not_broken_weights():
    """anra8571/WikipediaLLM: eval_loss NaN at all 7 evaluations, the training loss and grad_norm finite at all 87
    points: a warning about the evaluation, no learning-rate cause."""
    st = steps(40, 50)
    m = metrics(st, loss=np.linspace(3.0, 1.2, 40), grad_norm=np.full(40, 2.0))
    m["eval_loss"] = pd.Series(np.nan, index=st[9::10], dtype="float64")
    (f,) = [f for f in analyze_metrics(m, TH) if f.kind == "nonfinite_metric"]
    assert f.severity == "warning" and "evaluation" in f.message
    broken = dict(m, loss=pd.Series(np.where(np.arange(40) < 20, 2.0, np.nan), index=st))
    assert any(f.severity == "error" and f.metric == "eval_loss" for f in analyze_metrics(broken, TH))


def test_a_closing_train_loss_no_cross_entropy_takes_with_no_step_loss_is_a_divergence():
    """mellymeter/ES3890AI: the only number is the summary's train_loss 1.77e11 at step 69."""
    m = {"train_loss": pd.Series([1.77e11], index=[69], dtype="float64"),
         "epoch": pd.Series([2.98], index=[69], dtype="float64")}
    (f,) = detect_divergence(m, TH)
    assert (f.kind, f.severity, f.step) == ("divergence", "error", 69)
    assert detect_divergence(dict(m, train_loss=pd.Series([1.9], index=[69])), TH) == []


def test_grad_norm_zero_at_every_step_of_a_pairwise_log_sitting_under_ln_2_from_its_start_is_no_learning():
    """DehaoDai/minillm DPO: the SFT policy against its base starts (and stays) at 0.61 with grad_norm exactly 0 at
    all 20 points: the reference model's difference, not an update. The same zeros beside a loss that falls from
    ln 2 are the logging's (a DeepSpeed release that reports 0): nothing said."""
    from forensics.analyzers.frozen import detect_no_gradient

    n = 20
    st = steps(n, 5)
    flat = 0.6108 + 0.004 * np.sin(np.arange(n))
    m = metrics(st, loss=flat, grad_norm=np.zeros(n), **{"rewards/margins": np.full(n, 0.18),
                                                         "rewards/accuracies": np.ones(n)})
    (f,) = detect_no_gradient(m, TH)
    assert (f.kind, f.step) == ("no_learning_signal", st[0])
    falling = dict(m, loss=pd.Series(np.linspace(0.69, 0.35, n), index=st))
    assert detect_no_gradient(falling, TH) == []


def test_a_loss_under_a_tenth_of_a_nat_after_five_epochs_without_eval_is_memorization():
    """HandSomeGuy001 (XTuner, DAdaptAdam): eight epochs over 2,000 examples down to 0.03, no eval. After five passes
    over the same data a loss under 0.1 is the data learned by heart; after two it is not said."""
    n = 160
    st = steps(n, 10)
    loss = 0.03 + 5.3 * np.exp(-np.arange(n) / 25.0)
    for epochs, expected in ((8.0, ["memorization"]), (2.0, [])):
        m = metrics(st, loss=loss, epoch=np.linspace(epochs / n, epochs, n))
        assert [f.kind for f in detect_loss_collapse(m, TH) if f.kind == "memorization"] == expected, epochs


def test_saturated_dpo_pairs_name_no_precision_or_warm_up_cause(tmp_path):
    """luke-griggs's fp16 DPO without warm-up: its saturated pairs were told 'FP16 overflow' and 'No learning-rate
    warm-up' as possible causes, for which nothing in the log speaks; the objective was met, which beta, epochs or
    harder pairs answer."""
    import json

    import forensics

    history = [{"step": 20 * (i + 1), "loss": v, "grad_norm": g, "rewards/margins": 12.8 + i, "logps/rejected": -232 - 9 * i,
                "learning_rate": 5e-5 * (1 - i / 40)}
               for i, (v, g) in enumerate(zip([0.5414, 0.1564, 0.0139, 0.0039] + [0.0] * 36,
                                              [3.8, 0.55, 0.146, 0.163] + [2e-6] * 36))]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 800, "log_history": history}))
    (tmp_path / "training_args.bin").write_text(json.dumps({"fp16": True, "warmup_steps": 0, "warmup_ratio": 0.0,
                                                            "learning_rate": 5e-5, "gradient_accumulation_steps": 1}))
    a = forensics.analyze(tmp_path)
    assert (a.first_incident.kind, a.first_incident.step) == ("loss_collapse", 80)
    assert not [c for c in a.causes if c.cause in ("fp16_overflow", "no_warmup")]


def test_zeros_of_loss_grad_norm_and_rate_from_the_start_of_a_run_deepspeed_stopped_at_its_scale_floor_are_masked_nans():
    """FPT-VVU's fp16 ViVidBot: 16 lines of loss 0.0, grad_norm 0.0, learning_rate 0.0, then 'Current loss scale
    already at minimum': every step overflowed (DeepSpeed logs grad_norm 0 for a skipped step, the warm-up never
    began), and HF's filter logged the NaN losses as 0.0. Without the scaler's floor the same zeros are masked labels."""
    st = np.arange(1, 17)
    zeros = metrics(st, loss=np.zeros(16), grad_norm=np.zeros(16), learning_rate=np.zeros(16))
    floor = dict(zeros, loss_scale_at_minimum=pd.Series([1.0], index=[18]))
    found = analyze_metrics(floor, TH)
    assert (first_incident_of(found).kind, first_incident_of(found).step) == ("masked_nan_loss", 1)
    assert not [f for f in found if f.kind == "no_learning_signal"]
    assert first_incident_of(analyze_metrics(zeros, TH)).kind == "no_learning_signal"


def test_a_nan_gradient_right_before_a_model_that_never_moves_again_is_where_it_broke():
    """elena-lyulina's Megatron benchmark: grad norm NaN at iteration 1, then grad norm 0.000 and lm loss 10.40111
    (ln 32768) at every iteration to 15: the NaN update is the first incident, an error, and the stuck model its
    effect."""
    st = np.arange(1, 16)
    grad = np.r_[np.nan, np.zeros(14)]
    m = metrics(st, loss=np.r_[np.nan, np.nan, np.full(13, 10.40111)], grad_norm=grad)
    m["loss"] = m["loss"].dropna()
    found = analyze_metrics(m, TH)
    first = first_incident_of(found)
    assert (first.kind, first.step, first.severity) == ("nonfinite_metric", 1, "error")
    assert [f.caused_by for f in found if f.kind == "never_learned"] == [first.key]


def test_a_recovered_grad_norm_spike_the_falling_loss_rose_against_is_a_warning():
    """elena-lyulina's Megatron pre-training in its warm-up: the loss falling 0.08 an iteration, 7.67 -> 7.91 at a 43x
    grad_norm spike and back by the next: under the median of the twenty iterations before (8.57), yet a rise against
    the trend. The same spike with the loss going on down its trend is the heavy tail (info)."""
    from forensics.analyzers.grad_spike import detect_grad_norm_spikes

    st = np.arange(1, 61)
    loss = 10.4 - 0.09 * np.arange(60) + np.random.default_rng(3).normal(0, 0.02, 60)
    grad = np.full(60, 2.0) + np.random.default_rng(4).uniform(-0.4, 0.4, 60)
    grad[:5] = [11.9, 12.0, 12.3, 14.5, 11.6]  # a fresh model's first steps: its own early range
    grad[29] = 85.8
    quiet = loss.copy()
    reacted = loss.copy()
    reacted[29] = reacted[28] + 0.24
    (f,) = detect_grad_norm_spikes(metrics(st, loss=reacted, grad_norm=grad), TH)
    assert (f.step, f.severity) == (30, "warning")
    (f,) = detect_grad_norm_spikes(metrics(st, loss=quiet, grad_norm=grad), TH)
    assert f.severity == "info"


def test_a_zero_training_loss_beside_a_nan_eval_loss_is_a_masked_nan():
    """A-Mayank's fp16 QLoRA notebook: its one table row is training loss 0.000000, validation loss nan, and no
    grad_norm column. The evaluation ran NaN weights, so the 0.0 is HF's filter hiding a NaN training loss."""
    st = np.array([50])
    m = metrics(st, loss=np.array([0.0]), eval_loss=np.array([np.nan]))
    (f,) = detect_masked_nan_loss(m, TH)
    assert (f.step, f.severity) == (50, "error") and "eval loss at step 50 is NaN" in f.message
    # a finite eval beside the zero says nothing of the kind
    assert detect_masked_nan_loss(metrics(st, loss=np.array([0.0]), eval_loss=np.array([0.7])), TH) == []


def test_three_dpo_points_at_ln_2_with_no_gradient_and_no_reward_never_learned():
    """TRL issue 4023: three DPO lines, loss 0.6934, grad_norm exactly 0.0, every rewards/* exactly 0.0, while the
    warm-up raised the learning rate: nothing could move, three points are enough. With a gradient flowing, three
    points at ln 2 are only a short log (a DPO starts there)."""
    from forensics.analyzers.never_learned import detect_never_learned
    st = np.array([1, 2, 3])
    still = metrics(st, loss=np.full(3, 0.6934), grad_norm=np.zeros(3), learning_rate=np.array([4.5e-5, 9.5e-5, 1.45e-4]),
                    **{"rewards/chosen": np.zeros(3), "rewards/margins": np.zeros(3), "rewards/accuracies": np.zeros(3)})
    (f,) = detect_never_learned(still, TH)
    assert (f.kind, f.step) == ("never_learned", 1) and "grad_norm is exactly 0" in f.message
    flowing = metrics(st, loss=np.full(3, 0.6934), grad_norm=np.array([3.1, 2.8, 3.0]),
                      **{"rewards/chosen": np.zeros(3), "rewards/margins": np.zeros(3)})
    assert detect_never_learned(flowing, TH) == []


def test_a_training_loss_reaching_zero_after_the_eval_loss_already_did_is_no_collapse():
    """AndrewMichael2020's text-to-SQL GPT: the validation loss prints 0.0000 at the end of epoch 1 while the epoch's
    running training mean is 0.57; the next epoch's running means print 0.0000. The held-out data was predicted as
    well first: an easy task fitted, not a degenerate model. A loss that drops to 0 while the eval loss stays up is
    still a collapse."""
    from forensics.analyzers.collapse import detect_loss_collapse
    st = np.array([100, 200, 300, 400, 500, 600, 725, 825, 925, 1025, 1125, 1225, 1350, 1450, 1550])
    loss = np.array([3.5, 1.78, 1.19, 0.89, 0.71, 0.59, 0.0, 0.0, 0.0, 0.0009, 0.0008, 0.0009, 0.0, 0.0, 0.0])
    fitted = metrics(st, loss=loss)
    fitted["eval_loss"] = pd.Series({600: 0.0, 1225: 0.0}, dtype="float64")
    assert detect_loss_collapse(fitted, TH) == []
    degenerate = metrics(st, loss=loss)
    degenerate["eval_loss"] = pd.Series({600: 0.9, 1225: 2.4}, dtype="float64")
    assert [f.kind for f in detect_loss_collapse(degenerate, TH)] == ["loss_collapse"]


def test_a_constant_learning_rate_cannot_show_a_skipped_step_stalling_it():
    """Time-MoE issue 71 (batch AI6): LR 1e-4 at every line; the NaN grad_norm steps were said to have a learning
    rate 'that did not advance', which a constant schedule cannot show."""
    st = np.arange(10, 100, 10)
    m = metrics(st, learning_rate=np.full(len(st), 1e-4))
    assert lr_stalled(m, 40) is None


def test_every_saturated_pairs_message_advises_a_larger_beta_never_a_smaller_one():
    """beta scales the pairwise margin: a larger one meets the loss with the policy nearer the reference model. One
    message said "a smaller learning rate or beta" where the others say "a larger beta" (the second reading of
    session 32): the remedies now agree, and each is a sentence with its verb."""
    from forensics.analyzers.pairwise_loss import for_a_pairwise_loss

    collapse = Finding("loss_collapse", "error", 20, "loss collapse", metric="loss", evidence={"level_before": 0.69})
    (said,) = for_a_pairwise_loss([collapse], metrics(np.array([10, 20, 30]), loss=[0.69, 0.0, 0.0]))
    st = np.array([1, 10, 20, 30])
    m = metrics(st, loss=[0.6931, 0.163, 0.0, 0.0], grad_norm=[1628.0, 0.0139, 1.7e-8, 8.1e-8],
                **{"rewards/margins": [0.0, 26.7, 119.6, 141.7], "logps/chosen": [-21.7, -22.4, -23.1, -23.8],
                   "logps/rejected": [-433.1, -631.7, -1540.5, -1784.1]})
    (saturated,) = [f for f in analyze_metrics(m, TH) if f.kind == "loss_collapse"]
    for f in (said, saturated):
        assert "then try a" in f.message and "a larger beta" in f.message and "or beta" not in f.message, f.message
