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
