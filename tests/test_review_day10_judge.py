"""Day 10 judging fixes, each from a real case the corpus holds (tests/realworld/PROVENANCE.md, batch AR2).

* A warm-up exactly as long as the run (warmup_steps = max_steps = 100; MimicTester1307/adapters): the linear schedule
  climbs to step 99 and its one step of decay puts the rate at 0 on the last step, so the run never trained at a
  settled rate: an lr_anomaly, as a warm-up longer than the run already is.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from forensics.analyzers.warmup_past_the_end import detect_warmup_past_the_end


def _linear_with_warmup(warmup: int, total: int, peak: float = 1e-3) -> dict:
    steps = list(range(1, total + 1))
    rate = [peak * s / warmup if s < warmup else peak * max(0, total - s) / max(1, total - warmup) for s in steps]
    return {"learning_rate": pd.Series(rate, index=steps, dtype="float64"),
            "loss": pd.Series([1.93 - 0.002 * s for s in steps], index=steps, dtype="float64")}


def test_a_warmup_as_long_as_the_run_is_an_lr_anomaly():
    (found,) = detect_warmup_past_the_end(_linear_with_warmup(100, 100), 100, 100, 3.0)
    assert (found.kind, found.severity) == ("lr_anomaly", "warning")
    assert "as long as the run's 100 steps" in found.message and "step 99" in found.message, found.message


def test_a_warmup_that_ends_before_the_last_step_is_not():
    assert detect_warmup_past_the_end(_linear_with_warmup(90, 100), 90, 100, 3.0) == []
    assert detect_warmup_past_the_end(_linear_with_warmup(99, 100), 99, 100, 3.0) == []


# ---- a short log lower at every point than at the one before ---------------------------------------------------------

from forensics.analyzers.learning_evidence import detect_no_learning_evidence  # noqa: E402
from forensics.config import Thresholds  # noqa: E402


def _sparse_run(train: list[float], evals: list[float]) -> dict:
    steps = [500 * (k + 1) for k in range(len(train))]
    eval_steps = [400 * (k + 1) for k in range(len(evals))]
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "eval_loss": pd.Series(evals, index=eval_steps, dtype="float64")}


def test_an_eval_loss_lower_at_each_of_four_evaluations_is_evidence_of_learning():
    """HannahMariamj's LoRA: three training points and four evals, each lower than the one before (-33%, -29%);
    the fall slows, so the steps' spread reads as noise as large as the fall."""
    run = _sparse_run([5.824, 4.270, 3.922], [4.9701, 4.0301, 3.5932, 3.5199])
    assert detect_no_learning_evidence(run, Thresholds()) == []


def test_four_evaluations_that_wander_or_fall_a_little_are_not():
    wander = _sparse_run([5.824, 5.80, 5.83], [4.97, 4.93, 4.98, 4.95])
    # every step down, 0.6% in all: under the 1% a held-out set lower at every evaluation needs (fall_measure's
    # _HELD_OUT_FALL, set from the corpus: the non-learning runs' such falls were 0.13% and 0.63%, AkshayPethe's
    # learning one 1.27%; this test held 1.2% as "a little" when the bar was 3%)
    barely = _sparse_run([5.824, 5.80, 5.83], [4.97, 4.96, 4.95, 4.94])
    for run in (wander, barely):
        assert [f.kind for f in detect_no_learning_evidence(run, Thresholds())] == ["no_learning_evidence"]


# ---- memorization needs held-out data that did not follow the training loss down -------------------------------------

from forensics.analyzers.collapse import detect_loss_collapse  # noqa: E402


def _descent_to_zero(eval_level) -> dict:
    """A masked-LM-like run: the training loss falls gradually from 0.8 to ~1e-4 over 2000 steps (logged every 10,
    grad_norm finite), evaluated every 100 steps."""
    steps = list(range(10, 2010, 10))
    train = [max(0.8 * 0.965 ** (s / 10), 1e-4 * (1 + 0.3 * ((s // 10) % 3))) for s in steps]
    eval_steps = list(range(100, 2100, 100))
    return {"loss": pd.Series(train, index=steps, dtype="float64"),
            "grad_norm": pd.Series([0.1] * len(steps), index=steps, dtype="float64"),
            "eval_loss": pd.Series([eval_level(s) for s in eval_steps], index=eval_steps, dtype="float64")}


def test_a_training_loss_at_zero_with_the_eval_loss_following_it_down_is_not_memorization():
    run = _descent_to_zero(lambda s: max(0.55 * 0.96 ** (s / 10), 4e-5))
    assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == []


def test_a_training_loss_at_zero_with_the_eval_loss_held_up_is_still_memorization():
    run = _descent_to_zero(lambda s: 0.6)
    assert [f.kind for f in detect_loss_collapse(run, Thresholds())] == ["memorization"]


def test_a_warmup_written_as_a_float_or_a_string_is_read():
    for written in (100.0, "100", np.int64(100)):
        assert [f.kind for f in detect_warmup_past_the_end(_linear_with_warmup(100, 100), written, 100, 3.0)] \
            == ["lr_anomaly"], written


def test_the_run_length_said_is_its_planned_steps_where_the_last_is_not_logged():
    run = _linear_with_warmup(105, 105)
    run["epoch"] = pd.Series([s / 105 for s in run["loss"].index], index=run["loss"].index, dtype="float64")
    run = {k: v[v.index % 10 == 0] for k, v in run.items()}  # logged every 10: steps 10 to 100 (epoch 0.95)
    (found,) = detect_warmup_past_the_end(run, 105, 105, 1.0) or [None]
    assert found is not None and "as long as the run's 105 steps" in found.message, found


def test_a_flat_log_that_starts_mid_run_is_not_learned_by_its_first_point():
    """A reviewer's resumed run: 40 points from step 1010, flat at 1.5 (1.3% noise), its first point 0.065 higher
    (the resume's first batch): the first point of a log that starts mid-run is no start to have fallen from."""
    rng = np.random.default_rng(7)
    steps = [1010 + 10 * i for i in range(40)]
    values = [1.5 * (1 + 0.013 * rng.standard_normal()) + (0.0650 if i == 0 else 0) for i in range(40)]
    values[0] = 1.6048
    run = {"loss": pd.Series(values, index=steps, dtype="float64")}
    assert [f.kind for f in detect_no_learning_evidence(run, Thresholds())] == ["no_learning_evidence"]


# ---- a heavy grad-norm tail needs no 'back to normal' at the end of its log; a loss lagging its spikes still counts ----

import json  # noqa: E402
import math  # noqa: E402
from pathlib import Path  # noqa: E402

import forensics  # noqa: E402

_YOSHI = Path(__file__).parent / "realworld" / "yoshi182023_Deep" / "trainer_state.json"


def _write_state(folder, log, **state) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    body = {"log_history": log, "global_step": max(r["step"] for r in log), **state}
    (folder / "trainer_state.json").write_text(json.dumps(body))
    return folder


def test_the_heavy_tail_of_a_healthy_run_cut_at_an_earlier_checkpoint_is_still_no_incident(tmp_path):
    """yoshi182023_Deep (judged healthy: grad norms of 400-2092 at 24 of 135 points, clipped; eval falling) as its
    checkpoint-450 would hold it: its last spike is near the end of that log, which is no reason to warn."""
    state = json.loads(_YOSHI.read_text())
    log = [row for row in state["log_history"] if row["step"] <= 450]
    a = forensics.analyze(_write_state(tmp_path / "ckpt-450", log, max_steps=675), check_checkpoints=False)
    assert a.status == "healthy", [(f.kind, f.step, f.severity) for f in a.findings]


def test_a_grad_storm_whose_loss_jumps_one_logged_point_after_each_spike_stays_a_warning(tmp_path):
    """A reviewer's storm: 12 grad_norm spikes of 1000x, each followed at the next logged point by a 3.2x loss (a
    logged loss is the interval's mean, a logged grad_norm its last step's): not single hard batches."""
    rng = np.random.default_rng(0)
    bad, log = {45, 52, 60, 68, 75, 83, 90, 98, 105, 112, 120, 125}, []
    for i in range(130):
        step = 10 * (i + 1)
        level = 0.85 + 2.4 * math.exp(-i / 6)
        loss = level * (1 + 0.04 * rng.standard_normal()) * (3.2 if i - 1 in bad else 1)
        grad = (0.3 + 0.3 * math.exp(-i / 40)) * (1 + 0.1 * rng.standard_normal()) * (1000 if i in bad else 1)
        log.append({"step": step, "epoch": round(step / 400, 4), "loss": round(loss, 4), "grad_norm": round(grad, 4),
                    "learning_rate": 2e-4 * (1 - step / 1300)})
        if step % 100 == 0:
            log.append({"step": step, "epoch": round(step / 400, 4), "eval_loss": round(0.95 + math.exp(-i / 30), 4)})
    a = forensics.analyze(_write_state(tmp_path / "run", log, max_steps=1300, num_train_epochs=3.25),
                          check_checkpoints=False)
    storm = [f for f in a.findings if f.kind == "grad_norm_spike"]
    assert storm and storm[0].severity == "warning", [(f.kind, f.step, f.severity) for f in a.findings]
