"""Tests of the grad-norm spike rules on trainer_state.json logs: a heavy tail cut at a
checkpoint, a storm whose loss jumps after each spike.

From the day-10 judging fixes, each from a real case the corpus holds (tests/realworld/PROVENANCE.md, batch AR2)."""
from __future__ import annotations

import numpy as np


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
