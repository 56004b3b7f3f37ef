"""A log that ends in the middle of its own learning-rate schedule (analyzers.cut_short): a warm-up that finished, a
decay barely begun at the last logged step. Real case: Mukilan1600_tamslate (tests/realworld), 6e-4 at step 999,
5.63e-4 at step 2520 of a 20,000-step cosine plan."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analyzers.cut_short import detect_cut_short
from forensics.ingest import trainer_state

CORPUS = Path(__file__).parent / "realworld"


def _cosine(steps, warmup: int, total: int, peak: float = 6e-4, floor: float = 6e-5) -> np.ndarray:
    """A linear warm-up to `peak` over `warmup` steps, then a cosine decay to `floor` at `total`."""
    s = np.asarray(steps, dtype="float64")
    decay = floor + 0.5 * (peak - floor) * (1 + np.cos(math.pi * np.clip((s - warmup) / (total - warmup), 0, 1)))
    return np.where(s < warmup, peak * (s + 1) / warmup, decay)


def _run(last: int, warmup: int = 1000, total: int = 20000, every: int = 10, rate=None) -> dict:
    steps = np.arange(0, last + 1, every)
    lr = _cosine(steps, warmup, total) if rate is None else rate(steps)
    loss = 1.2 + 4.4 * np.exp(-steps / 400)
    return {"learning_rate": pd.Series(lr, index=steps), "loss": pd.Series(loss, index=steps)}


def test_a_log_ending_early_in_its_cosine_decay_is_a_warning_at_its_last_step():
    (found,) = detect_cut_short(_run(2520), None, accounted_for=False)
    assert (found.kind, found.severity, found.step) == ("run_cut_short", "warning", 2520)
    assert "barely begun" in found.message and found.evidence["last_lr"] >= 0.9 * found.evidence["peak_lr"]


def test_a_run_logged_to_the_end_of_its_schedule_is_not_cut():
    assert detect_cut_short(_run(20000), None, accounted_for=False) == []  # the rate reached its floor
    assert detect_cut_short(_run(6000), None, accounted_for=False) == []  # half way down: not near the peak


def test_files_that_say_why_the_log_ends_silence_it():
    assert detect_cut_short(_run(2520), None, accounted_for=True) == []  # a closing summary, should_training_stop
    assert detect_cut_short(_run(2520), 2600, accounted_for=False) == []  # its planned max_steps reached


def test_schedules_with_no_end_to_miss_are_not_cut():
    constant = _run(2520, rate=lambda s: np.where(s < 1000, 6e-4 * (s + 1) / 1000, 6e-4))
    inverse_sqrt = _run(1200, every=2, rate=lambda s: np.where(s < 1000, 6e-4 * (s + 1) / 1000,
                                                               6e-4 * np.sqrt(1000 / np.maximum(s, 1))))
    no_warmup = _run(2520, rate=lambda s: _cosine(s + 1000, 1000, 21000))
    for metrics in (constant, inverse_sqrt, no_warmup):
        assert detect_cut_short(metrics, None, accounted_for=False) == []


def test_a_run_stopped_within_tens_of_steps_of_its_peak_is_judged_on_what_it_did():
    # Candice1995_LLM-QO-VLDB2025: warm-up to 2e-4 in 5 steps, linear decay, stopped at step 42 of 600: healthy
    short = _run(42, warmup=5, total=600, every=1)
    assert detect_cut_short(short, None, accounted_for=False) == []


def _state(tmp_path: Path, stop: bool | None, last: int = 2500) -> Path:
    steps = range(10, last + 1, 10)
    history = [{"step": s, "loss": float(1.2 + 4.4 * math.exp(-s / 400)), "learning_rate": float(_cosine([s], 1000,
               20000)[0]), "grad_norm": 0.4, "epoch": s / 20000} for s in steps]
    state = {"global_step": last, "log_history": history, "logging_steps": 10, "epoch": last / 20000}
    if stop is not None:
        state["stateful_callbacks"] = {"TrainerControl": {"args": {"should_training_stop": stop, "should_save": True}}}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    return tmp_path


def test_trainer_state_keeps_should_training_stop(tmp_path):
    assert trainer_state.read(_state(tmp_path, False) / "trainer_state.json").meta["should_training_stop"] is False
    assert "should_training_stop" not in trainer_state.read(_state(tmp_path, None) / "trainer_state.json").meta


def test_a_checkpoint_saved_mid_run_is_a_snapshot_not_a_cut(tmp_path):
    # ijinyu1113_Learned-Remasking-Policy-for-dLLM: checkpoint-2000 of 14,973, should_training_stop False: healthy
    assert not any(f.kind == "run_cut_short" for f in forensics.analyze(_state(tmp_path, False)).findings)


def test_a_state_that_does_not_say_why_it_ends_is_cut(tmp_path):
    a = forensics.analyze(_state(tmp_path, None))
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "run_cut_short", 2500)


def test_the_corpus_run_cut_at_step_2520_of_20000_is_a_warning():
    a = forensics.analyze(CORPUS / "Mukilan1600_tamslate")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "run_cut_short", 2520)


# --- a console that records its process's exit short of its planned steps (RoyK0108_amc-tutor-study) ---------------

# mlx_lm.lora, iters 600, cosine_decay from 2e-4 after 60 warm-up iterations: 16 report lines, every 20 iterations
_MLX_STEPS = np.arange(20, 321, 20)
_SHUTDOWN = ("/Users/x/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There "
             "appear to be 1 leaked semaphore objects to clean up at shutdown\n"
             "  warnings.warn('resource_tracker: There appear to be %d '\n")


def _mlx_rate(steps):
    s = np.asarray(steps, dtype="float64")
    return np.where(s < 260, 1e-6 + (2e-4 - 1e-6) * s / 260, 1e-5 + 0.5 * (2e-4 - 1e-5)
                    * (1 + np.cos(math.pi * (s - 260) / 2100)))


def _mlx_run() -> dict:
    return {"learning_rate": pd.Series(_mlx_rate(_MLX_STEPS), index=_MLX_STEPS),
            "loss": pd.Series(0.7 + 0.9 * np.exp(-_MLX_STEPS / 30), index=_MLX_STEPS)}


def test_a_process_that_exited_short_of_its_plan_with_its_decay_barely_begun_was_cut():
    (found,) = detect_cut_short(_mlx_run(), 600, accounted_for=False, exit_line="resource_tracker: ... at shutdown")
    assert (found.kind, found.step) == ("run_cut_short", 320)
    assert "600" in found.message and "at shutdown" in found.message and found.evidence["planned_steps"] == 600


def test_the_same_short_schedule_without_the_exit_or_the_plan_is_left_alone():
    # too few points and too short a decay to read a plan from: a console copied part-way says nothing of the end
    assert detect_cut_short(_mlx_run(), 600, accounted_for=False) == []
    assert detect_cut_short(_mlx_run(), None, accounted_for=False, exit_line="... at shutdown") == []
    assert detect_cut_short(_mlx_run(), 340, accounted_for=False, exit_line="... at shutdown") == []  # ran its plan


def test_an_exit_in_the_warm_up_or_on_a_constant_rate_is_no_schedule_cut():
    rising = {**_mlx_run(), "learning_rate": pd.Series(2e-4 * _MLX_STEPS / 600, index=_MLX_STEPS)}
    flat = {**_mlx_run(), "learning_rate": pd.Series(np.full(len(_MLX_STEPS), 2e-4), index=_MLX_STEPS)}
    for metrics in (rising, flat):
        assert detect_cut_short(metrics, 600, accounted_for=False, exit_line="... at shutdown") == []


def test_the_shutdown_warning_that_ends_a_console_is_its_exit_line():
    from forensics.ingest.console_exit import exit_line
    lines = "".join(f"Iter {s}: Train loss 0.7, Learning Rate 2e-4, It/sec 0.2\n" for s in (300, 320))
    assert "leaked semaphore objects to clean up at shutdown" in exit_line(lines + _SHUTDOWN)
    assert exit_line(lines) is None
    assert exit_line(_SHUTDOWN + lines) is None  # a warning of a worker that ended before the run went on


def test_roy_k0108_mlx_qlora_shut_down_at_320_of_600_is_cut_short():
    a = forensics.analyze(CORPUS / "RoyK0108_amc-tutor-study")
    assert a.status == "warning" and a.first_incident.kind == "run_cut_short" and a.first_incident.step == 320


def test_olmo_console_that_shut_down_with_no_learning_rate_logged_is_left_alone():
    # AntonioLopardo_OLMo: the same shutdown warnings after step 2003 of 2500, judged healthy; it logs no rate, so
    # no schedule says what the run was still to do
    a = forensics.analyze(CORPUS / "AntonioLopardo_OLMo")
    assert a.status == "healthy" and not [f for f in a.findings if f.kind == "run_cut_short"]


# --- review 29b: whose exit, and whose plan (a copy of RoyK0108's folder with its own consoles) ----------------------

def _mlx_console(plan: int, last: int, every: int = 20, saved: bool = False, shutdown: bool = True) -> str:
    lines = "".join(f"Iter {s}: Train loss {0.7 + 0.9 * math.exp(-s / 30):.3f}, "
                    f"Learning Rate {float(_mlx_rate([s])[0]):.3e}, "
                    f"It/sec 0.17, Tokens/sec 100.0, Trained Tokens {s * 500}, Peak mem 6.6 GB\n"
                    for s in range(every, last + 1, every))
    return (f"Loading pretrained model\nStarting training..., iters: {plan}\n" + lines
            + ("Saved final weights to adapters/adapters.safetensors.\n" if saved else "")
            + (_SHUTDOWN if shutdown else ""))


def _roy_copy(tmp_path: Path, consoles: dict) -> Path:
    import shutil
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "RoyK0108_amc-tutor-study", run)
    (run / "results" / "log_train.txt").unlink()
    for name, text in consoles.items():
        (run / "results" / name).write_text(text)
    return run


def _cut(run: Path) -> list:
    return [f for f in forensics.analyze(run, check_checkpoints=False).findings if f.kind == "run_cut_short"]


def test_another_consoles_shutdown_is_not_the_exit_of_the_run_that_logged_the_last_step(tmp_path):
    # the training log copied part-way at 320 (no exit), an earlier try's console (to 100) ends with the warning
    first_try = "Loading pretrained model\nStarting training..., iters: 600\n" + "".join(
        f"Iter {s}: Train loss 1.{s}, It/sec 0.2\n" for s in range(10, 101, 10)) + _SHUTDOWN
    run = _roy_copy(tmp_path, {"log_train.txt": _mlx_console(600, 320, shutdown=False),
                               "log_train_1.7b_first_try.txt": first_try})
    assert _cut(run) == []


def test_a_console_whose_own_banner_plans_320_iters_ran_its_plan(tmp_path):
    # `--iters 320` on the command line over the YAML's 600: mlx_lm prints the plan it runs, then saves its weights
    assert _cut(_roy_copy(tmp_path, {"log_train.txt": _mlx_console(320, 320, saved=True)})) == []


def test_the_same_console_planned_for_600_and_shut_down_at_320_is_still_cut(tmp_path):
    (found,) = _cut(_roy_copy(tmp_path, {"log_train.txt": _mlx_console(600, 320)}))
    assert found.step == 320 and found.evidence["planned_steps"] == 600
