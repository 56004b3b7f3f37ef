"""A short multi-epoch log whose per-epoch mean loss falls at every epoch, its last point the lowest, shows the run
learned, though each epoch's first batch sits above the rest (the zig-zag a reshuffled pass makes) and the fall is
a couple of point-to-point noise units (`secondary_evidence.epoch_means_fell`). Runs are LLaMA-Factory's
trainer_log.jsonl, written as its LogCallback writes them."""
from __future__ import annotations

import json
import math

from forensics import analyze

_STEPS_AN_EPOCH = 33  # 3 epochs = 99 steps, a loss logged every 10


def _llamafactory_log(tmp_path, losses: list[float]):
    """trainer_log.jsonl lines at steps 10, 20, ... and the closing line without a loss, as LLaMA-Factory writes."""
    total = 3 * _STEPS_AN_EPOCH
    lines = []
    for i, loss in enumerate(losses, 1):
        step = 10 * i
        lr = 1e-4 * min(1.0, step / 10) * 0.5 * (1 + math.cos(math.pi * step / total))
        lines.append({"current_steps": step, "total_steps": total, "loss": loss, "lr": lr,
                      "epoch": step / _STEPS_AN_EPOCH, "percentage": round(100 * step / total, 2),
                      "elapsed_time": f"0:0{step // 20}:{step % 60:02d}", "remaining_time": "0:01:00"})
    lines.append({"current_steps": total, "total_steps": total, "epoch": 3.0, "percentage": 100.0,
                  "elapsed_time": "0:05:00", "remaining_time": "0:00:00"})
    (tmp_path / "trainer_log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path


def test_epoch_means_falling_at_every_epoch_with_the_last_point_lowest_is_learning(tmp_path):
    # epochs: (2.10, 1.93, 1.95) mean 1.993 | (2.02, 1.86, 1.88) mean 1.920 | (1.98, 1.85, 1.83) mean 1.887
    a = analyze(_llamafactory_log(tmp_path, [2.10, 1.93, 1.95, 2.02, 1.86, 1.88, 1.98, 1.85, 1.83]))
    assert a.status == "healthy", [f.message for f in a.findings]
    assert "epoch" in a.learning.said


def test_epoch_means_that_do_not_fall_at_every_epoch_are_no_evidence(tmp_path):
    """The same zig-zag with the second epoch's mean no lower than the first's: no learning shown."""
    a = analyze(_llamafactory_log(tmp_path, [2.10, 1.93, 1.95, 2.12, 1.94, 1.96, 1.98, 1.85, 1.83]))
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"


def test_epoch_means_falling_but_the_run_not_ending_on_its_lowest_point_are_no_evidence(tmp_path):
    a = analyze(_llamafactory_log(tmp_path, [2.10, 1.93, 1.95, 2.02, 1.82, 1.88, 1.98, 1.85, 1.86]))
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"


def test_an_epoch_logged_twice_at_a_step_does_not_stop_the_reading():
    """A trainer_state.json's eval record repeats the epoch at its step: one epoch value a step is read."""
    import pandas as pd

    from forensics.analyzers.secondary_evidence import epoch_means_fell
    from forensics.config import Thresholds

    steps = list(range(10, 100, 10))
    loss = pd.Series([2.10, 1.93, 1.95, 2.02, 1.86, 1.88, 1.98, 1.85, 1.83], index=steps)
    epochs = pd.Series([s / _STEPS_AN_EPOCH for s in steps + [90]], index=steps + [90])
    assert epoch_means_fell({"loss": loss, "epoch": epochs}, loss, Thresholds()) is not None
