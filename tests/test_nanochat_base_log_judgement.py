"""Tests of the judgement of nanochat base-training consoles: grad-norm jumps at the first
updates, the profile's size and method, memorization from scratch.

From day 9's third pass over spikes, memorization and profiles the tool got wrong on real runs."""
from __future__ import annotations

import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


# ---- (1) a nanochat base_train console: the first updates' grad_norm is no spike; its parameter count -------------


def _nanochat_base_log(folder, loss, grad_norm, n=400, params="560,988,160"):
    """nanochat's scripts/base_train.py console: its setup lines, then `step N/M (P%) | loss: X | grad norm: G | lrm:
    L | dt: Tms | tok/sec: S | mfu: U | total time: Tm` at every step."""
    lines = ["Vocab size: 65,536", "num_layers: 20", "model_dim: 1280",
             f"Number of parameters: {params}", "Calculated number of iterations from target data:param ratio: 21,400",
             "Step 00000 | Validation bpb: 3.3015"]
    for s in range(n):
        lines.append(f"step {s:05d}/21400 ({100 * s / 21400:.2f}%) | loss: {loss(s):.6f} | grad norm: {grad_norm(s):.4f} "
                     f"| lrm: 1.00 | dt: 13800.00ms | tok/sec: 38,000 | mfu: 12.20 | total time: {s * 0.23:.2f}m")
    (folder / "speedrun.log").write_text("\n".join(lines) + "\n")


def _falling_from_ln_vocab(s):
    return 3.2 + 7.9 * math.exp(-s / 15) + 0.03 * math.sin(s * 1.3)


def _first_updates_grad_norm(s):
    """0.43 at step 0 (random weights), 11 at the first update, 2-7 for twenty steps, then about 0.2."""
    if s == 0:
        return 0.4282
    if s <= 20:
        return 11.03 * math.exp(-(s - 1) / 8) + 0.3 * (s % 3)
    return 0.2 + 0.03 * math.sin(s * 1.7)


def test_a_grad_norm_jump_at_the_first_updates_while_the_loss_falls_from_its_start_is_no_spike(tmp_path):
    _nanochat_base_log(tmp_path, _falling_from_ln_vocab, _first_updates_grad_norm)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity != "info"], \
        [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


def test_a_grad_norm_jump_at_the_first_updates_that_lifts_the_loss_is_still_a_spike(tmp_path):
    def rises_at_the_jump(s):
        return 11.09 if s == 0 else 11.6 if s <= 3 else _falling_from_ln_vocab(s)

    _nanochat_base_log(tmp_path, rises_at_the_jump, _first_updates_grad_norm)
    a = _analyze(tmp_path)
    spikes = [f for f in a.findings if f.kind == "grad_norm_spike" and f.severity != "info"]
    assert spikes and spikes[0].step == 1, [f.message for f in a.findings]


def test_nanochat_number_of_parameters_line_is_the_model_size_and_a_start_at_ln_vocab_is_a_full_pre_training(tmp_path):
    _nanochat_base_log(tmp_path, _falling_from_ln_vocab, _first_updates_grad_norm)
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert profile["model_params"] == 560_988_160
    assert (profile["method"], profile["objective"]) == ("full", "pretrain")


def test_a_pre_training_console_that_starts_from_a_trained_model_names_no_method(tmp_path):
    """The same console starting at 3.5 nats (continued pre-training of trained weights): nothing says which weights
    were trained."""
    _nanochat_base_log(tmp_path, lambda s: 3.2 + 0.3 * math.exp(-s / 50) + 0.03 * math.sin(s * 1.3),
                       lambda s: 0.2 + 0.03 * math.sin(s * 1.7))
    profile = _analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["objective"]) == ("unknown", "pretrain")


# ---- (3) a from-scratch pre-training that plateaus at a low loss over one pass is a low-entropy task --------------


def _steady_grad(s):
    return 0.2 + 0.03 * math.sin(s * 1.7)


def _to_a_low_plateau(s):
    """From ln(vocab) to about 0.4 nats within the first tenth, then flat there to the end (code-like data seen once)."""
    return 0.4 + 10.69 * math.exp(-s / 40) + 0.05 * math.sin(s * 1.3)


def test_a_from_scratch_loss_flat_at_a_low_level_from_early_on_with_no_second_pass_is_no_memorization(tmp_path):
    _nanochat_base_log(tmp_path, _to_a_low_plateau, _steady_grad, n=2000)
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "memorization"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


def test_a_from_scratch_loss_that_goes_on_falling_toward_zero_under_the_floor_is_memorization(tmp_path):
    def still_falling(s):
        return _to_a_low_plateau(s) if s < 200 else 0.45 * math.exp(-(s - 200) / 400) + 0.003

    _nanochat_base_log(tmp_path, still_falling, _steady_grad, n=2000)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization", [f.message for f in a.findings]
