"""Tests of per-batch epoch lines: two ranks out of step, a resume from an epoch's checkpoint.

From the adversarial review of ca9d85f..HEAD (rules 1-8 of the day's second batch). A failing test was a
misfire; passing tests record shapes that held."""
from __future__ import annotations

import numpy as np

from support.notebook_and_findings import _analyze, _kinds


# ---- (6) epoch-only per-batch lines ----------------------------------------------------------------------------------


def test_two_ranks_printing_per_batch_epoch_lines_out_of_step_at_an_epoch_boundary_are_no_restart(tmp_path):
    """A DDP loop whose two ranks each print `Epoch E, Loss: x` a batch (their own losses, so no copy groups), rank 0
    reaching the next epoch a few lines before rank 1 finishes this one: the epoch seems to go back (1 then 0) at each
    boundary. Each such dip starts a new 'attempt', the timeline takes the later one as a resume. Should stay one
    healthy run. Fix: forensics/ingest/once_an_epoch.py:_attempts (a new attempt only where the epoch goes back and
    stays back: the lines of the higher epoch do not come again just after)."""
    rng = np.random.default_rng(0)
    lines, n = [], 60
    for e in range(4):
        for b in range(n):
            for r in range(2):
                lines.append((e, b, r, 2.5 - 0.004 * (e * n + b) + rng.normal(0, 0.03)))
    # rank 0 runs 3 batches ahead: its first lines of epoch e+1 come before rank 1's last of epoch e
    order = sorted(lines, key=lambda t: (t[0] * n + t[1] - (3 if t[2] == 0 else 0), t[2]))
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}, Loss: {v:.4f}\n" for e, b, r, v in order))
    a = _analyze(tmp_path)
    assert a.status == "healthy" and len(a.timeline.frame) >= 400, (_kinds(a), len(a.timeline.frame))


def test_a_run_resumed_from_the_previous_epochs_checkpoint_held(tmp_path):
    rng = np.random.default_rng(1)
    rows = [(e, 2.5 - 0.01 * (e * 40 + b) + rng.normal(0, 0.03)) for e in range(3) for b in range(40)]
    rows += [(e, 2.5 - 0.01 * (e * 40 + b) + rng.normal(0, 0.03)) for e in range(2, 5) for b in range(40)]
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}, Loss: {v:.4f}\n" for e, v in rows))
    a = _analyze(tmp_path)
    assert a.status in ("healthy", "warning") and not any(f.severity == "error" for f in a.findings), _kinds(a)
