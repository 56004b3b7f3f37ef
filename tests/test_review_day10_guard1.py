"""Guards on the day-10 noise rules (fix-ar-guard1): a reviewer's small Trainer logs where a grad_norm storm under a
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
