"""Tests of the spike noise rules (analyzers/loss_spike.py, grad_spike.py): where noise is no excuse.

Guards on the day-10 noise rules (fix-ar-guard1): a reviewer's small Trainer logs where a grad_norm storm under a
falling eval loss, or loss spikes in a log whose only jumps are those spikes, were read as noise. Each run is written
as the Trainer writes trainer_state.json, built as the reviewer built it, beside a healthy run of the same shape
whose noise must stay quiet."""
from __future__ import annotations

import json
import math

import numpy as np

import forensics


def _write_state(folder, log: list[dict], **state) -> str:
    """trainer_state.json as the HF Trainer leaves it: its log_history, global_step and max_steps."""
    folder.mkdir(parents=True, exist_ok=True)
    last = max(row["step"] for row in log)
    body = {"log_history": log, "global_step": last, "max_steps": state.pop("max_steps", last), **state}
    (folder / "trainer_state.json").write_text(json.dumps(body, indent=1))
    return str(folder)


def _warnings(analysis, kind: str) -> list[int]:
    return [f.step for f in analysis.findings if f.kind == kind and f.severity == "warning"]


# ---- (1) a grad_norm storm under a falling eval loss: the heavy tail only where each spike is a lone hard batch ----


def _lora_with_grad_storm(tmp_path, seed: int, spikes: set[int], grad_factor: float, loss_factor: float = 1.0,
                          sustained_from: int | None = None) -> str:
    """A LoRA SFT logged every 10 steps (140 logs), eval every 100 steps: the loss 2.9 falling to 0.9 with 4% noise,
    the grad_norm 0.8 falling to 0.3 with 10%, `grad_factor` x at the `spikes` logs (the loss `loss_factor` x there);
    from `sustained_from` on the grad_norm stays at 7.5 (25x its level) and the loss 15% up to the end, the eval
    loss rising a little after its best at step 1100."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(140):
        step = 10 * (i + 1)
        up = sustained_from is not None and i >= sustained_from
        loss = (0.9 + 2.0 * math.exp(-i / 8)) * (1 + 0.04 * rng.standard_normal()) * (1.15 if up else 1.0)
        grad = (0.3 + 0.5 * math.exp(-i / 30)) * (1 + 0.1 * rng.standard_normal())
        if i in spikes:
            grad, loss = grad * grad_factor, loss * loss_factor
        if up:
            grad = 7.5 * (1 + 0.1 * rng.standard_normal())
        log.append({"step": step, "epoch": round(step / 500, 4), "loss": round(loss, 4), "grad_norm": round(grad, 4),
                    "learning_rate": 1e-4})
        if step % 100 == 0:
            evals = 1.3 - 0.3 * min(step, 1100) / 1100 + (0.05 if up and step > 1200 else 0.0)
            log.append({"step": step, "epoch": round(step / 500, 4), "eval_loss": round(evals, 4)})
    return _write_state(tmp_path / "run", log, max_steps=1400)


_RECURRING = {40, 48, 57, 66, 74, 83, 91, 100, 108, 115}


def test_a_grad_norm_storm_that_stays_up_to_the_end_of_the_log_is_a_warning_whatever_the_eval_did(tmp_path):
    run = forensics.analyze(_lora_with_grad_storm(tmp_path, 4, _RECURRING, 20.0, sustained_from=122))
    assert run.status == "warning"
    assert _warnings(run, "grad_norm_spike") == [410]


def test_a_grad_norm_storm_with_a_loss_spike_at_each_of_its_spikes_is_a_warning_under_a_falling_eval(tmp_path):
    rng = np.random.default_rng(2)
    bad = {45, 52, 60, 68, 75, 83, 90, 98, 105, 112, 120, 127}  # the reviewer's sft_gradstorm
    log = []
    for i in range(130):
        step = 10 * (i + 1)
        loss = (0.85 + 2.4 * math.exp(-i / 6)) * (1 + 0.04 * rng.standard_normal()) * (3.2 if i in bad else 1)
        grad = (0.3 + 0.3 * math.exp(-i / 40)) * (1 + 0.1 * rng.standard_normal()) * (1000 if i in bad else 1)
        log.append({"step": step, "epoch": round(step / 400, 4), "loss": round(loss, 4), "grad_norm": round(grad, 4),
                    "learning_rate": 2e-4 * (1 - step / 1300)})
        if step % 100 == 0:
            log.append({"step": step, "epoch": round(step / 400, 4), "eval_loss": round(0.95 + math.exp(-i / 30), 4)})
    run = forensics.analyze(_write_state(tmp_path / "run", log, max_steps=1300, num_train_epochs=3.25))
    assert run.status == "warning"
    assert _warnings(run, "grad_norm_spike") == [460]


def test_lone_grad_norm_spikes_of_hard_batches_under_a_falling_eval_stay_a_heavy_tail_not_said_to_be_clipped(tmp_path):
    run = forensics.analyze(_lora_with_grad_storm(tmp_path, 4, _RECURRING, 20.0, loss_factor=1.3))
    storm = [f for f in run.findings if f.kind == "grad_norm_spike"]
    assert run.status == "healthy" and storm and all(f.severity == "info" for f in storm)
    assert any(f.evidence.get("heavy_tail") for f in storm)
    assert "clipped" not in " ".join(f.message for f in storm)  # the log says nothing of max_grad_norm


# ---- (2) loss spikes: recurring jumps excuse a spike only where the log throws them apart from the spikes judged ----


def _lora_loss_log(seed: int, spikes: dict[int, float], n: int = 120, start: int = 0) -> list[dict]:
    """The reviewer's LoRA SFT logged every 10 steps (`n` logs of 10-step means, 4% noise): the loss 2.85 falling to
    0.85, times `spikes[i]` at log i."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(n):
        step = 10 * (i + 1)
        loss = (0.85 + 2.0 * math.exp(-i / 6)) * (1 + 0.04 * rng.standard_normal()) * spikes.get(i, 1.0)
        log.append({"step": step, "epoch": round(step / 400, 4), "loss": round(loss, 4),
                    "learning_rate": 2e-4 * (1 - step / 1200)})
    return log


_FOUR_SPIKES = {35: 3.2, 55: 3.3, 85: 3.1, 110: 3.2}


def test_four_recovered_3x_loss_spikes_of_a_quiet_log_are_not_their_own_recurring_noise(tmp_path):
    run = forensics.analyze(_write_state(tmp_path / "run", _lora_loss_log(1, _FOUR_SPIKES), max_steps=1200))
    assert run.status == "warning"
    assert run.first_incident.kind == "loss_spike" and run.first_incident.step == 360


def test_a_15x_loss_jump_in_the_first_twenty_logs_is_not_noise_by_its_own_height(tmp_path):
    log = _lora_loss_log(1, _FOUR_SPIKES)
    log[12]["loss"] = 25.0  # the reviewer's sft_early_blowup: 2.2 -> 25 at the 13th log, back at the next
    run = forensics.analyze(_write_state(tmp_path / "run", log, max_steps=1200))
    assert (run.first_incident.kind, run.first_incident.step) == ("loss_spike", 130)


def test_recovered_3x_spikes_of_a_pre_training_log_starting_near_ln_vocab_are_not_noise(tmp_path):
    rng = np.random.default_rng(0)
    spikes = {30: 3.1, 31: 1.6, 60: 3.2, 90: 3.1, 91: 1.5, 120: 3.2, 140: 3.1}  # the reviewer's pretrain_spikes150
    log = []
    for i in range(150):
        step = 50 * (i + 1)
        loss = (3.3 + 7.5 * math.exp(-i / 10)) * (1 + 0.01 * rng.standard_normal()) * spikes.get(i, 1.0)
        log.append({"step": step, "epoch": step / 40000, "loss": round(loss, 4), "learning_rate": 6e-4})
    run = forensics.analyze(_write_state(tmp_path / "run", log))
    assert run.status == "warning" and 3050 in _warnings(run, "loss_spike")


def test_a_stretch_of_twelve_logs_at_3x_in_a_short_log_is_not_single_batches_under_its_high_start(tmp_path):
    rng = np.random.default_rng(1)
    spikes = {35: 3.3, 55: 3.6, 95: 3.6, 110: 3.6}  # the reviewer's sft_unstable_stretch
    log = []
    for i in range(120):
        step = 10 * (i + 1)
        level = 3.5 if i < 10 else 0.9 + 2.6 * math.exp(-(i - 10) / 8)
        loss = level * (1 + 0.04 * rng.standard_normal()) * spikes.get(i, 1.0)
        if 70 <= i < 82:
            loss = 2.8 * (1 + 0.04 * rng.standard_normal())
        log.append({"step": step, "epoch": round(step / 400, 4), "loss": round(loss, 4),
                    "learning_rate": 2e-4 * (1 - step / 1200)})
    run = forensics.analyze(_write_state(tmp_path / "run", log, max_steps=1200))
    assert run.status == "warning" and any(560 <= step <= 710 for step in _warnings(run, "loss_spike"))


def test_loss_spikes_that_come_with_each_grad_norm_spike_of_a_storm_are_warnings_not_batch_noise(tmp_path):
    bad = {45, 52, 60, 68, 75, 83, 90, 98, 105, 112, 120, 127}
    rng = np.random.default_rng(2)
    log = []
    for i in range(130):
        step = 10 * (i + 1)
        loss = (0.85 + 2.4 * math.exp(-i / 6)) * (1 + 0.04 * rng.standard_normal()) * (3.2 if i in bad else 1)
        log.append({"step": step, "epoch": round(step / 400, 4), "loss": round(loss, 4),
                    "learning_rate": 2e-4 * (1 - step / 1300)})
    run = forensics.analyze(_write_state(tmp_path / "run", log, max_steps=1300))
    assert _warnings(run, "loss_spike") == [460]


def _noisy_small_batch_log(seed: int) -> list[dict]:
    """A LoRA on batches of 2 logged every 5 steps (135 logs, each the mean of 5 steps): the loss falls from 7.7 to
    about 0.55 within a few dozen steps, its logs spread lognormally (sigma 0.6: one in ten 2.2x its median), which
    now and then jumps a point 3x over a calm stretch and comes straight back."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(135):
        step = 5 * (i + 1)
        loss = (0.55 + 7.2 * math.exp(-i / 6)) * math.exp(0.6 * rng.standard_normal())
        log.append({"step": step, "epoch": round(step / 135, 4), "loss": round(loss, 4),
                    "learning_rate": 5e-4 * (1 - step / 675)})
    return log


def test_jumps_within_a_noisy_small_batch_loss_stay_its_own_noise_and_are_not_called_per_step(tmp_path):
    run = forensics.analyze(_write_state(tmp_path / "run", _noisy_small_batch_log(8), max_steps=675))
    assert run.status == "healthy" and _warnings(run, "loss_spike") == []
    noise = [f for f in run.findings if f.kind == "loss_spike"]
    assert noise and all(f.evidence.get("single_batches") for f in noise)
    assert all("per-step" not in f.message for f in noise)  # a log of 5-step means shows its batches' noise
