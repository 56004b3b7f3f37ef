"""Tests of the causes' advice: fp16 skips, the rate a later divergence ran at.

From the adversarial review of the rules added on 2026-11-26 (after 14:00): every test FAILS on the code it was
written against (15cf9c0); its docstring names the change it targets."""
from __future__ import annotations

import math

from support.trainer_state_files import _analyze, _trainer_state


# ---- change 6 (precision.py: "Nothing to change for these alone") ----------------------------------------------------


def test_fp16_skips_at_one_step_in_six_are_not_told_there_is_nothing_to_change(tmp_path):
    """Change 6. An fp16 LoRA (LLaMA-Factory training_args.yaml fp16: true), 200 steps logged every step, grad_norm
    Inf with a finite loss at every sixth step (33 skips, each alone, the learning rate not advancing there), the loss
    still falling. The tool's skipped_steps finding counts them (33 isolated steps) and fp16_overflow now advises
    "Nothing to change for these alone: the fp16 loss scaler skips an update that overflows ... If skips come often
    or in runs ... train in bf16". Here they do come often: one update in six thrown away, a scaler that halves its
    scale every six steps and never regrows (growth_interval 2000) is not calibrating but overflowing for good.
    Before the change the advice was bf16. Right: the bf16 advice, not "Nothing to change", for skips this frequent."""
    rows, done = [], 0
    bad = set(range(5, 200, 6))
    for s in range(1, 201):
        done += s not in bad
        rows.append({"step": s, "loss": round(2.5 - s / 200 + 0.05 * math.sin(s), 4),
                     "grad_norm": float("inf") if s in bad else 1.2, "learning_rate": 2e-5 * min(1, done / 10),
                     "epoch": s / 200})
    run = _trainer_state(tmp_path / "run", rows, training_args__yaml="stage: sft\nfinetuning_type: lora\nfp16: true\n"
                         "learning_rate: 2.0e-5\nmax_grad_norm: 1.0\nlogging_steps: 1\n")
    a = _analyze(run)
    assert a.first_incident.kind == "skipped_steps" and a.run_profile.precision == "fp16"
    fp16 = {c.cause: c for c in a.causes}["fp16_overflow"]
    assert "Nothing to change" not in fp16.suggestion, fp16.suggestion


# ---- change 8 (review-advice5: the rate judged is the one in force before the first trouble) -------------------------


def test_an_early_recovered_spike_does_not_hide_the_rate_a_later_divergence_ran_at(tmp_path):
    """Change 8 (causes/evidence.py Facts.first_unstable, peak_lr). A LoRA at learning_rate 3e-3 (15x the 1e-4 to 2e-4
    of LoRA recipes), warm-up over 500 steps, logged every 5: one grad_norm spike at step 25 (40x, back to 1 at the next
    point; the rate then 1.5e-4), then from step 705, at the full 3e-3, the loss diverges (1.9 -> 24) with grad_norm
    climbing to 105. The tool says broken (divergence at 705) and now gives no cause at all: the recovered spike at 25
    is taken as "the trouble", the rate in force then (1.5e-4) is in range, and the configured 3e-3 is "not reached by
    then". Without the spike at 25, the same run gets lr_too_high (likely), as it did before the change. Right: the
    divergence that broke the run is judged at the rate it ran at: lr_too_high."""
    rows = []
    for s in range(5, 1001, 5):
        loss, grad = 2.2 - 0.4 * s / 1000, 1.0
        if s == 25:
            loss, grad = 6.5, 40.0
        if s >= 700:
            loss, grad = 1.9 * (1 + (s - 700) / 25), 5.0 + (s - 700)
        rows.append({"step": s, "loss": round(loss, 4), "grad_norm": grad,
                     "learning_rate": 3e-3 * min(1.0, s / 500), "epoch": s / 1000})
    run = _trainer_state(tmp_path / "run", rows, training_args__yaml="stage: sft\nfinetuning_type: lora\nbf16: true\n"
                         "learning_rate: 3.0e-3\nwarmup_steps: 500\nmax_grad_norm: 1.0\n")
    a = _analyze(run)
    assert a.status == "broken"
    assert "lr_too_high" in {c.cause for c in a.causes}, [(c.cause, c.evidence) for c in a.causes]
