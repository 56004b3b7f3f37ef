"""Tests of logs counted by iteration: findings dated by the optimizer step.

From the day-8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 /
AO3).

* A log that counts its lines by iteration and prints the optimizer step beside each (lit-gpt's `iter 1152 step 144:
  loss X`, issues 628 and 689) dates its findings by the optimizer step; one whose step never advances keeps its
  iterations."""
from __future__ import annotations

from pathlib import Path

import forensics


# ---- the low a divergence message states -------------------------------------------------------------------------


_JUMP = [1.7019, 11.463, 11.7545, 11.5019, 11.4807, 12.1935, 10.022, 10.9364, 10.5513]


# ---- findings of an iteration-counted log dated by its optimizer step --------------------------------------------

def _litgpt_log(path: Path, losses: list[float], first_iter: int, accumulation: int) -> Path:
    lines = []
    for k, loss in enumerate(losses):
        it = first_iter + k
        stepping = (it + 1) % accumulation == 0
        step = (it + 1) // accumulation
        lines.append(f"iter {it} step {step}: loss {loss:.4f}, iter time: 1106.53ms{' (optimizer.step)' if stepping else ''}")
    (path / "train.log").write_text("\n".join(lines) + "\n")
    return path


def test_a_divergence_in_an_iteration_counted_log_is_dated_by_its_optimizer_step(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, _JUMP, 1151, 8))
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "divergence", 144)
    assert "iteration 1152 is optimizer step 144" in a.first_incident.message


def test_a_flat_loss_in_an_iteration_counted_log_is_dated_by_its_optimizer_step(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, [10.8259] * 23, 76, 2))
    assert (a.first_incident.kind, a.first_incident.step) == ("never_learned", 38)


def test_an_iteration_counted_log_whose_optimizer_step_never_advances_keeps_its_iterations(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, [3.72 - 0.003 * k for k in range(17)], 46, 64))
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 46)


def test_a_log_without_an_optimizer_step_is_dated_as_before(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"iter {i}: loss {v:.4f}, time 1106.53ms\n"
                                                for i, v in zip(range(1151, 1160), _JUMP)))
    a = forensics.analyze(tmp_path)
    assert (a.first_incident.kind, a.first_incident.step) == ("divergence", 1152)
