"""Judgements that were wrong on real runs: each test builds a small log the way the library writes it
(trainer_state.json's log_history, TensorBoard via torch's SummaryWriter, console dict lines) and FAILS on the code
before the change it targets; each rule has a healthy run beside it where it must stay silent."""
from __future__ import annotations

import json
import math

import pytest

import forensics


def _trainer_state(folder, history, **extra):
    folder.mkdir(parents=True, exist_ok=True)
    state = {"global_step": max(h["step"] for h in history), "log_history": history, **extra}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return folder


def _training_args_bin(folder, **kw):
    """training_args.bin as the Trainer saves it: torch.save of its TrainingArguments."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.save(transformers.TrainingArguments(output_dir=str(folder), report_to=[], **kw), folder / "training_args.bin")


def _kinds(analysis):
    return {f.kind for f in analysis.findings if f.severity in ("warning", "error")}


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


# 2. a loss many times any vocabulary's uniform guess: impossible, and the first thing wrong

def _console(folder, lines, name="train.log"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(line + "\n" for line in lines))
    return folder


def test_a_trainer_loss_many_times_any_vocabularys_guess_is_the_first_incident(tmp_path):
    """HF Trainer dict lines whose loss is 400-2700 for six lines at learning rate 0.0, then 6e7, then 0.0 (the NaN
    filter) and an eval_loss of nan: the Trainer logs a per-token mean, and no vocabulary's uniform guess is above
    about 13 nats, so the first line's loss is impossible and is where it went wrong: broken, first incident
    impossible_loss at line 1, the masked NaN after it put down to it. Before: the start was only a
    start_above_uniform_guess warning and the first incident the masked NaN at line 8."""
    losses = [537.6, 915.8, 1891.6, 425.8, 1528.5, 2697.5]
    lines = [f"{{'loss': {v}, 'learning_rate': 0.0, 'epoch': {0.03 * (i + 1):.2f}}}" for i, v in enumerate(losses)]
    lines.append("{'loss': 61674848.0, 'learning_rate': 3e-06, 'epoch': 0.21}")
    lines += [f"{{'loss': 0.0, 'learning_rate': {3e-6 * (i + 2)}, 'epoch': {0.24 + 0.03 * i:.2f}}}" for i in range(4)]
    lines.append("{'eval_loss': nan, 'eval_runtime': 147.7, 'epoch': 0.33}")
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert a.status == "broken"
    assert (a.first_incident.kind, a.first_incident.step) == ("impossible_loss", 1)
    assert "start_above_uniform_guess" not in _kinds(a)


def test_one_impossible_point_right_before_a_masked_nan_is_the_blow_ups_onset(tmp_path):
    """A loss of 122 at the first logging window and exactly 0.0 at every one after (the NaN filter): one point is the
    blow-up already under way in that window, not an incident of its own: the first incident stays the masked NaN."""
    lines = ["{'loss': 122.14, 'learning_rate': 2.5e-05, 'epoch': 0.08}"]
    lines += [f"{{'loss': 0.0, 'learning_rate': 5e-05, 'epoch': {0.08 * (i + 2):.2f}}}" for i in range(8)]
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert a.status == "broken"
    assert a.first_incident.kind == "masked_nan_loss"


def test_a_hand_written_loops_summed_loss_that_learns_is_not_impossible(tmp_path):
    """A hand-written loop printing 'Step N loss: L' with L summed over a batch's response tokens (91 falling to
    about 50, ordinary batch-to-batch swings): its author's choice, not a fault, and the run learned: healthy, no
    impossible_loss."""
    lines = [f"Step {s} loss: {50 + 41 * math.exp(-s / 40) + 6 * math.sin(s):.4f}" for s in range(1, 128, 2)]
    a = forensics.analyze(_console(tmp_path / "run", lines))
    assert "impossible_loss" not in _kinds(a), [(f.kind, f.step) for f in a.findings]
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]


# 3. few evals: a held-out loss that stopped improving while the training loss kept falling

def _epochs_history(evals, train_levels, per_epoch=200, eval_every=250):
    """Train loss logged every 10 steps, dropping at each epoch boundary to the next of `train_levels` (with per-step
    noise), an eval every `eval_every` steps taking the values `evals` in turn."""
    n = per_epoch * len(train_levels)
    history = []
    for step in range(10, n + 1, 10):
        level = train_levels[(step - 1) // per_epoch]
        history.append({"epoch": round(step / per_epoch, 3), "grad_norm": 1.0 + 0.1 * math.sin(step),
                        "learning_rate": 2e-4 * (1 - step / n), "loss": round(level + 0.04 * math.sin(step * 0.7), 4),
                        "step": step})
        if step % eval_every == 0 and step // eval_every <= len(evals):
            history.append({"epoch": round(step / per_epoch, 3), "eval_loss": evals[step // eval_every - 1],
                            "eval_runtime": 10.0, "step": step})
    return history


def test_few_evals_that_rise_off_their_best_while_the_train_loss_falls_are_overfitting(tmp_path):
    """Four evals, 1.806, 1.785 (the best), 1.810, 1.808, while the training loss drops at each epoch boundary
    1.85 -> 1.60 -> 1.42: the held-out loss stopped improving and sits 1.3% above its best while the training loss
    fell 17% more: an overfitting warning from the first eval after the best (step 750). Before: no finding, the four
    evals too few for the climb and noise rules."""
    history = _epochs_history([1.806, 1.785, 1.810, 1.808], [1.85, 1.60, 1.42, 1.42], per_epoch=250, eval_every=250)
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 750)


def test_few_evals_still_falling_or_level_with_a_falling_train_loss_are_healthy(tmp_path):
    """The same training loss with evals that keep improving (1.806, 1.785, 1.770, 1.768), or that level off within
    1% of their best (1.806, 1.785, 1.789, 1.790): no overfitting, healthy."""
    for name, evals in (("falling", [1.806, 1.785, 1.770, 1.768]), ("level", [1.806, 1.785, 1.789, 1.790])):
        history = _epochs_history(evals, [1.85, 1.60, 1.42, 1.42], per_epoch=250, eval_every=250)
        a = forensics.analyze(_trainer_state(tmp_path / name, history))
        assert "overfitting" not in _kinds(a), name
        assert a.status == "healthy", (name, [(f.kind, f.step) for f in a.findings])


# 4. learning evidence: one blip does not set the noise; a token accuracy that rises clearly is evidence

def _titan_lines(losses, first_step=14):
    return [f"[rank0]:[titan] 2026-05-18 10:00:{i:02d},000 - root - INFO - step: {first_step + i:2d}  loss: {v:7.4f}  "
            f"grad_norm:  0.7{i % 10}  memory: 30.12GiB(31.70%)  tps: 6,000  tflops: 300.00  mfu: 30.00%"
            for i, v in enumerate(losses)]


def test_one_blip_in_a_short_log_does_not_hide_its_fall_as_noise(tmp_path):
    """Eight torchtitan steps, 3.244, 3.107, 3.050, 3.145, then one 3.544 that the next step erases, then 3.010,
    2.900, 3.009: the blip alone triples the point-to-point noise (0.16 with it, 0.06 without) and made the fall of
    the others read as noise (no_learning_evidence). Set aside, the fall shows: healthy."""
    a = forensics.analyze(_console(tmp_path / "run", _titan_lines([3.244, 3.107, 3.050, 3.145, 3.544, 3.010, 2.900,
                                                                   3.009])))
    assert a.run_profile.framework == "torchtitan"
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]
    assert a.learning is not None and a.learning.metric == "loss"


def test_a_short_log_that_does_not_fall_still_has_no_learning_evidence(tmp_path):
    """The same eight steps flat around 3.1 with the same one-step blip: setting the blip aside shows no fall, so
    still no evidence it learned."""
    a = forensics.analyze(_console(tmp_path / "run", _titan_lines([3.100, 3.080, 3.120, 3.090, 3.544, 3.110, 3.085,
                                                                   3.105])))
    assert "no_learning_evidence" in _kinds(a)


def _sft_history(accuracy, n=40):
    """TRL SFT log_history every 10 steps: a loss that swings 0.5-0.7 batch to batch with no trend, and the given
    mean_token_accuracy at each point."""
    return [{"step": 10 * (i + 1), "loss": round(0.6 + 0.1 * math.sin(i * 2.3), 4), "grad_norm": 0.5,
             "learning_rate": 2e-4 * (1 - i / n), "entropy": 0.9, "mean_token_accuracy": accuracy(i),
             "num_tokens": 4096.0 * (i + 1), "epoch": round((i + 1) / n, 3)} for i in range(n)]


def test_a_token_accuracy_that_rises_clearly_is_evidence_the_run_learned(tmp_path):
    """A noisy loss with no trend beside a mean_token_accuracy rising 0.60 -> 0.80 with small noise: the share of
    target tokens predicted right went up, the run learned: healthy. Before: no_learning_evidence from the loss."""
    history = _sft_history(lambda i: round(0.6 + 0.2 * i / 39 + 0.005 * math.sin(i * 1.9), 4))
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert a.status == "healthy", [(f.kind, f.step, f.message) for f in a.findings]
    assert a.learning is not None and a.learning.metric == "mean_token_accuracy"


def test_a_token_accuracy_that_moved_within_its_noise_is_no_evidence(tmp_path):
    """The same loss with a token accuracy at 0.817 at its first point and 0.82-0.86 after, no trend: within its own
    noise, no evidence: still no_learning_evidence."""
    history = _sft_history(lambda i: 0.817 if i == 0 else round(0.84 + 0.015 * math.sin(i * 2.9), 4))
    a = forensics.analyze(_trainer_state(tmp_path / "run", history))
    assert "no_learning_evidence" in _kinds(a)


# 5. advice in the run's framework's terms; a cyclic schedule logged sparsely is a schedule

def _fp16_advice(framework, **cfg):
    from forensics.causes import infer_causes
    from forensics.config import Thresholds
    from forensics.profile import RunProfile
    from tests.test_causes import NAN_GRAD, config, error
    found = infer_causes(config(fp16=True, **cfg), NAN_GRAD, [error()], [], Thresholds(),
                         RunProfile(framework=framework, precision="fp16"))
    return next(c for c in found if c.cause == "fp16_overflow").suggestion


def test_the_fp16_advice_names_megatrons_flag_for_a_megatron_run():
    """A Megatron run that overflowed in fp16: the switch is the launch flag --bf16, not the TrainingArguments field
    bf16=True it does not have. Before: 'Train in bf16 (bf16=True)' to every run."""
    advice = _fp16_advice("megatron")
    assert "--bf16" in advice and "bf16=True" not in advice and "max_grad_norm" not in advice


def test_the_fp16_advice_names_the_deepspeed_config_for_a_hand_written_deepspeed_loop():
    """A hand-written loop run by DeepSpeed (its config's fp16 section on): the switch is the config's
    "bf16": {"enabled": true}; a run of unknown framework is told it in words."""
    advice = _fp16_advice("deepspeed", ds__fp16__enabled=True)
    assert '"bf16": {"enabled": true}' in advice and "bf16=True" not in advice
    words = _fp16_advice("unknown")
    assert "bfloat16" in words and "bf16=True" not in words and "--bf16" not in words


def test_the_fp16_advice_for_a_trainer_run_keeps_the_training_arguments_flag():
    """An HF Trainer / TRL run: bf16=True in its TrainingArguments, as before (and the DeepSpeed section beside it
    where its DeepSpeed config sets fp16 itself)."""
    assert "bf16=True" in _fp16_advice("hf_trainer") and "max_grad_norm=1.0" in _fp16_advice("trl")
    both = _fp16_advice("hf_trainer", ds__fp16__enabled=True)
    assert "bf16=True" in both and '"bf16": {"enabled": true}' in both


def _schedule_run(folder, rates, every):
    """A run whose learning rate follows `rates` (one per optimizer step), logged every `every` steps, its loss
    falling steadily."""
    total = len(rates)
    history = [{"step": s, "loss": round(0.5 + 2.0 * math.exp(-s / total), 4), "grad_norm": 1.0,
                "learning_rate": rates[s - 1], "epoch": round(s / total, 4)} for s in range(every, total + 1, every)]
    return _trainer_state(folder, history)


def _rates(make_scheduler, total):
    torch = pytest.importorskip("torch")
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=2e-4, momentum=0.9)
    scheduler = make_scheduler(optimizer)
    rates = []
    for _ in range(total):
        optimizer.step()
        scheduler.step()
        rates.append(optimizer.param_groups[0]["lr"])
    return rates


@pytest.mark.parametrize("name, make, every", [
    ("hard_restarts", lambda o: pytest.importorskip("transformers").get_cosine_with_hard_restarts_schedule_with_warmup(
        o, 0, 1000, num_cycles=4), 70),
    ("hard_restarts_warmup", lambda o: pytest.importorskip("transformers")
     .get_cosine_with_hard_restarts_schedule_with_warmup(o, 50, 2000, num_cycles=5), 45),
    ("warm_restarts", lambda o: __import__("torch").optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=100), 45),
    ("warm_restarts_tmult", lambda o: __import__("torch").optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=100, T_mult=2), 40),
    ("cyclic", lambda o: __import__("torch").optim.lr_scheduler.CyclicLR(o, base_lr=1e-5, max_lr=1e-3,
                                                                       step_size_up=100), 30),
])
def test_a_cyclic_schedule_logged_sparsely_is_no_lr_anomaly(tmp_path, name, make, every):
    """A cosine with hard restarts, SGDR warm restarts (T_mult 1 and 2) and CyclicLR, each logged every 30-70 steps
    (a few points a cycle, the cycle's low seen at some restarts and not others): the schedule is a schedule, no
    lr_anomaly, healthy. Before: one lr_anomaly for each restart whose low was logged (3-5 a run)."""
    total = 2000 if name == "hard_restarts_warmup" else 1500 if name == "warm_restarts_tmult" else 1000
    a = forensics.analyze(_schedule_run(tmp_path / name, _rates(make, total), every))
    assert not [f for f in a.findings if f.kind == "lr_anomaly"], [(f.step, f.message) for f in a.findings]
    assert a.status == "healthy"


def test_a_schedule_started_over_at_uneven_steps_is_one_lr_anomaly(tmp_path):
    """A linear decay to 0 at step 60, then train() called again with a longer schedule that runs out at step 300,
    then again (a rate back at its peak each time, at uneven intervals): the run went past its schedule twice, told
    as one warning from the first restart, not one each."""
    rates = [2.5e-4 * (1 - s / 60) for s in range(1, 61)] + [2.5e-4 * (1 - s / 240) for s in range(1, 241)]
    rates += [2.5e-4 * (1 - s / 300) for s in range(1, 301)]
    a = forensics.analyze(_schedule_run(tmp_path / "run", rates, 5))
    found = [f for f in a.findings if f.kind == "lr_anomaly"]
    assert len(found) == 1 and found[0].step == 65, [(f.step, f.message) for f in found]
    assert found[0].evidence["restarts"] == [65, 305]
