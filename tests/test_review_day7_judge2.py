"""Datings and spikes the tool got wrong on real runs (day 7, second pass): each test builds a small log as the real
library writes it and checks what its name says."""
from __future__ import annotations

import json
import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _trainer_state(folder, steps, loss, grad_norm=lambda s: 1.0, per_epoch=100, eval_loss=None):
    """An HF Trainer checkpoint's trainer_state.json: one log_history row per logged step ({'epoch', 'grad_norm',
    'learning_rate', 'loss', 'step'}), plus {'eval_loss', 'epoch', 'step'} rows where `eval_loss` gives one."""
    history = []
    for s in steps:
        history.append({"epoch": round(s / per_epoch, 4), "grad_norm": grad_norm(s),
                        "learning_rate": 5e-4 * (1 - s / (steps[-1] + 1)), "loss": round(loss(s), 4), "step": s})
        if eval_loss is not None and eval_loss(s) is not None:
            history.append({"epoch": round(s / per_epoch, 4), "eval_loss": eval_loss(s), "eval_runtime": 1.0,
                            "step": s})
    state = {"epoch": steps[-1] / per_epoch, "global_step": steps[-1], "log_history": history,
             "logging_steps": steps[1] - steps[0], "max_steps": steps[-1], "num_train_epochs": steps[-1] // per_epoch}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def _wobble(s):
    return 1 + 0.15 * math.sin(s * 1.7)  # per-step noise of a batch-1 log


# ---- (1) memorization dated where the loss reaches the memorized level, not where a fast descent levels off ---------


def _levels_off_high_then_creeps_to_zero(s):
    """A LoRA on 100 examples: from near chance (9 nats) to about 0.5 within its first two passes, then down to 0.04
    over the eight passes after."""
    if s < 170:
        return (0.5 + 8.5 * math.exp(-s / 35)) * _wobble(s)
    return (0.04 + 0.46 * math.exp(-(s - 170) / 200)) * _wobble(s)


def test_memorization_is_dated_where_the_loss_nears_the_memorized_level_not_where_its_fast_descent_ends(tmp_path):
    _trainer_state(tmp_path, list(range(2, 762, 2)), _levels_off_high_then_creeps_to_zero)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization"
    # the fast descent levels off at ~0.5 by step ~180 (epoch 1.8); the loss is under 0.15 from about step 450
    assert 400 <= a.first_incident.step <= 600, a.first_incident.message


def test_a_fine_tune_that_settles_well_above_the_memorized_level_is_healthy(tmp_path):
    """The same descent levelling off at 0.5 nats and staying there: a model that learned, nothing memorized."""
    _trainer_state(tmp_path, list(range(2, 762, 2)),
                   lambda s: (0.5 + 8.5 * math.exp(-s / 35)) * _wobble(s))
    a = _analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert not [f for f in a.findings if f.kind == "memorization"]


# ---- (2) an early grad_norm spike judged against the run's later points, not only the few before it ----------------


def _console(path, rows):
    """HF Trainer / TRL console: one printed dict a logging step, `{'loss': 1.46, 'grad_norm': 14.98, ...}`."""
    lines = []
    for i, (loss, grad) in enumerate(rows):
        lines.append(str({"loss": loss, "grad_norm": grad, "learning_rate": 2e-4, "epoch": round((i + 1) / 40, 3)}))
    path.write_text("\n".join(lines) + "\n")


_FLAT_GRAD = [7.8, 8.1, 7.5, 8.3, 7.9, 7.6, 8.2, 7.7, 8.0, 7.9, 8.1, 7.8, 7.6, 8.2, 7.9, 8.0]


def _falling_loss(n):
    return [round(1.6 * 0.93 ** i + 0.02 * (-1) ** i, 4) for i in range(n)]


def test_a_grad_norm_spike_at_the_fourth_logged_step_is_judged_against_the_runs_later_points(tmp_path):
    """grad_norm 15, 9.8, 7.6, then 92 (about 9x the three before it, 12x the run's other points), back to ~8 at once:
    a spike, though fewer than `spike_min_history` points precede it."""
    grad = [14.98, 9.78, 7.64, 92.1, 29.0] + _FLAT_GRAD
    _console(tmp_path / "train.log", list(zip(_falling_loss(len(grad)), grad)))
    a = _analyze(tmp_path)
    spikes = [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity == "warning"]
    assert [f.step for f in spikes] == [4], [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "grad_norm_spike" and a.first_incident.step == 4


def test_a_grad_norm_high_at_its_first_points_and_falling_away_is_the_start_of_training(tmp_path):
    """A first or second point far above the rest that falls away steadily (the start-up of training), and a
    series that starts many-fold above the level it settles at: no spike, a healthy run."""
    for name, head in (("first", [95.0, 40.0, 18.0, 11.0]), ("second", [6.0, 95.0, 30.0, 12.0]),
                       ("level", [80.0, 70.0, 75.0, 450.0, 60.0, 30.0])):
        folder = tmp_path / name
        folder.mkdir()
        grad = head + [g / 10 if name == "level" else g for g in _FLAT_GRAD]
        _console(folder / "train.log", list(zip(_falling_loss(len(grad)), grad)))
        a = _analyze(folder)
        assert not [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity != "info"], \
            (name, [f.message for f in a.findings])
        assert a.status == "healthy", (name, [f.message for f in a.findings])


# ---- (3) a loss spike out of a steady low loss, in a run that started many times higher -----------------------------


def _settled_low(s):
    """A LoRA SFT logged every 10 steps (each point the mean of ten): from 10.7 nats to a steady 0.04 by step 300."""
    return 0.04 + 10.6 * math.exp(-s / 30) + 0.001 * math.sin(s)


_JUMP = {430: 0.0516, 440: 0.126, 450: 0.2057, 460: 0.1421, 470: 0.1128, 480: 0.0965, 490: 0.0866, 500: 0.0771}


def test_a_loss_jumping_fivefold_out_of_a_steady_low_level_is_a_loss_spike_though_under_a_tenth_of_its_start(tmp_path):
    """0.043 -> 0.126 -> 0.206 (x4.8), then slowly back: a rise of 0.16 nats, under a tenth of where the log started
    (about 1.7 over its first points), out of a loss that held within a few percent before it."""
    _trainer_state(tmp_path, list(range(10, 1210, 10)),
                   lambda s: _JUMP.get(s, _settled_low(s) if s < 430 else 0.065 + 0.001 * math.sin(s)),
                   grad_norm=lambda s: 0.5 + 0.02 * math.sin(s), per_epoch=400)
    a = _analyze(tmp_path)
    spikes = [f for f in a.findings if f.kind == "loss_spike" and f.severity == "warning"]
    assert spikes and 430 <= spikes[0].step <= 460, [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "loss_spike"


def test_single_batch_jumps_of_a_noisy_near_zero_loss_are_no_loss_spike(tmp_path):
    """A per-step loss that hovers noisily near 0.02 (0.003-0.07) touching 0.13-0.24 now and then, in a run that
    started at 3: the noise of small batches near zero, under the start-scaled bar, stays no spike."""
    noise = [0.02, 0.005, 0.045, 0.011, 0.07, 0.003, 0.032, 0.009, 0.051, 0.016, 0.004, 0.038, 0.012, 0.027]
    jumps = {2315: 0.2425, 2845: 0.1849, 2600: 0.13}

    def loss(s):
        return 3.0 * math.exp(-s / 100) + jumps.get(s, noise[(s // 5) % len(noise)])

    _trainer_state(tmp_path, list(range(5, 3605, 5)), loss, per_epoch=1200)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "loss_spike" and f.severity != "info"], \
        [f.message for f in a.findings]


# ---- (4) an eval loss that climbs eval after eval while the training loss falls, and later falls again --------------


_CLIMB_THEN_FALL = {250: 5.071, 500: 5.101, 750: 5.22, 1000: 5.262, 1250: 4.514, 1500: 1.169, 1750: 0.897,
                    2000: 0.944, 2250: 0.887, 2500: 0.871, 2750: 0.85, 3000: 0.856}


def test_an_eval_loss_climbing_over_four_evals_while_train_falls_is_overfitting_though_later_evals_fall(tmp_path):
    """Eval 5.07 -> 5.10 -> 5.22 -> 5.26 over the evals at 250-1000 while the training loss falls 4.9 -> 3.7, then
    both fall far lower: overfitting from the eval after the best (500), not healthy."""
    _trainer_state(tmp_path, list(range(10, 3010, 10)),
                   lambda s: (4.0 * math.exp(-s / 60) + 5.2 - 0.0016 * s if s < 1250 else 0.02 + 3.2 * math.exp(-(s - 1250) / 80))
                   * _wobble(s) + 0.0,
                   eval_loss=lambda s: _CLIMB_THEN_FALL.get(s), per_epoch=75)  # ~7 passes by 500, as in tomoqt's
    a = _analyze(tmp_path)
    over = [f for f in a.findings if f.kind == "overfitting"]
    assert over and over[0].step == 500, [f.message for f in a.findings]
    assert a.status == "warning" and a.first_incident.kind == "overfitting" and a.first_incident.step == 500


def test_an_eval_loss_that_wobbles_while_both_fall_is_no_overfitting(tmp_path):
    """An eval loss falling with the training loss, up and down by a few thousandths between evals, three climbs in a
    row near the end (1.3% in all) where the training loss has levelled off: healthy."""
    wobbles = [0.0, 0.012, -0.006, 0.01, 0.004, -0.008, 0.011, 0.0, 0.004, 0.008, 0.012, 0.0]
    _trainer_state(tmp_path, list(range(10, 3010, 10)), lambda s: (0.8 + 2.0 * math.exp(-s / 400)) * _wobble(s),
                   eval_loss=lambda s: (0.9 + 2.0 * math.exp(-s / 400) + wobbles[s // 250 - 1]) if s % 250 == 0 else None,
                   per_epoch=3000)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "overfitting"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]
