"""Spikes, memorization and profiles the tool got wrong on real runs (day 9, third pass): each test builds a small log
as the real program writes it and checks what its name says."""
from __future__ import annotations

import json
import math

import pytest

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


# ---- (2) a loss halving at every epoch boundary, many-fold down over the passes, no eval: memorization ------------


def _trainer_state(folder, pass_levels, per_epoch=100, last_points=None):
    """An HF Trainer checkpoint's trainer_state.json logging every step ({'epoch', 'learning_rate', 'loss', 'step'}),
    no grad_norm, no eval: the loss flat within each epoch at `pass_levels[k]` (per-step noise around it), stepping
    down at each epoch boundary; the last epoch cut off after `last_points` steps where given."""
    history, step = [], 0
    n = per_epoch * (len(pass_levels) - 1) + (last_points or per_epoch)
    for step in range(1, n + 1):
        level = pass_levels[min((step - 1) // per_epoch, len(pass_levels) - 1)]
        history.append({"epoch": round(step / per_epoch, 4), "learning_rate": 2e-5 * (1 - step / (n + 1)),
                        "loss": round(level * (1 + 0.12 * math.sin(step * 1.7)), 4), "step": step})
    state = {"epoch": n / per_epoch, "global_step": n, "log_history": history, "logging_steps": 1,
             "max_steps": per_epoch * len(pass_levels), "num_train_epochs": len(pass_levels)}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))


def test_a_loss_halving_at_each_epoch_start_many_fold_down_to_a_fifth_of_a_nat_is_memorization(tmp_path):
    _trainer_state(tmp_path, [1.46, 1.13, 0.73, 0.39, 0.19, 0.105], last_points=15)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization", [f.message for f in a.findings]
    assert 400 <= a.first_incident.step <= 401, a.first_incident.message  # where the fifth pass (0.19) starts


def test_a_staircase_that_fell_a_few_fold_over_its_passes_is_a_task_learned_not_memorized(tmp_path):
    _trainer_state(tmp_path, [0.49, 0.30, 0.17, 0.115])
    a = _analyze(tmp_path)
    assert not [f for f in a.findings if f.kind == "memorization"], [f.message for f in a.findings]
    assert a.status == "healthy", [f.message for f in a.findings]


# ---- (4) no training-loss curve, but the summary says many epochs, a mean loss many times the final eval loss ------


def _run_clm_output(folder, epochs, steps, train_loss, eval_loss, eval_accuracy):
    """transformers' run_clm.py output folder with logging_steps longer than the run: trainer_state.json holding only
    the end summary, the train/eval/all results files, and the TensorBoard run with the summary and the evaluation."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    summary = {"epoch": float(epochs), "step": steps, "total_flos": 1.5e14, "train_loss": train_loss,
               "train_runtime": 109.7, "train_samples_per_second": 2.735, "train_steps_per_second": 2.735}
    state = {"best_metric": None, "epoch": float(epochs), "global_step": steps, "log_history": [summary],
             "max_steps": steps, "num_train_epochs": epochs, "total_flos": 1.5e14}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    train = {"epoch": float(epochs), "train_loss": train_loss, "train_runtime": 109.7, "train_samples": 3,
             "train_samples_per_second": 2.735, "train_steps_per_second": 2.735}
    evals = {"epoch": float(epochs), "eval_accuracy": eval_accuracy, "eval_loss": eval_loss, "eval_runtime": 0.34,
             "eval_samples": 3, "eval_samples_per_second": 8.7, "eval_steps_per_second": 8.7,
             "perplexity": math.exp(eval_loss)}
    (folder / "train_results.json").write_text(json.dumps(train, indent=4))
    (folder / "eval_results.json").write_text(json.dumps(evals, indent=4))
    (folder / "all_results.json").write_text(json.dumps({**evals, **train}, indent=4))
    # the Trainer's TensorBoardCallback: train/* at the end of training, eval/* from trainer.evaluate() after it
    writer = SummaryWriter(str(folder / "runs" / "Oct11_01-48-25_host"))
    for key in ("train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos", "train_loss",
                "epoch"):
        writer.add_scalar(f"train/{key}", {**summary, "epoch": float(epochs)}[key], steps)
    for key in ("loss", "accuracy", "runtime"):
        writer.add_scalar(f"eval/{key}", evals[f"eval_{key}"], steps)
    writer.add_scalar("train/epoch", float(epochs), steps)
    writer.close()


def test_an_eval_loss_near_zero_after_a_hundred_epochs_under_a_mean_train_loss_ten_times_higher_is_memorization(
        tmp_path):
    _run_clm_output(tmp_path, 100, 300, 0.7794, 0.0834, 0.9857)
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "memorization", [f.message for f in a.findings]
    assert a.first_incident.step == 300
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"]


def test_a_summary_only_run_of_three_epochs_with_an_ordinary_eval_loss_still_lacks_learning_evidence(tmp_path):
    _run_clm_output(tmp_path, 3, 300, 2.41, 2.05, 0.55)
    a = _analyze(tmp_path)
    assert a.first_incident is not None and a.first_incident.kind == "no_learning_evidence", \
        [f.message for f in a.findings]
    assert not [f for f in a.findings if f.kind == "memorization"]
