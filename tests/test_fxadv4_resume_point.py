"""The resume advice of a hidden NaN (loss logged as 0.0) names a point before the FIRST incident that harmed the
weights (divergence onset, a non-finite metric, a loss spike that never came back), not the first 0.0; and where no
update was made before that incident (the learning rate logged as 0.0 throughout), it gives no resume point at all."""
from __future__ import annotations

import json
import math

import forensics
from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, timeline

NAN = math.nan


def _trainer_state(folder, rows):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": rows, "global_step": rows[-1]["step"]}))
    return folder


def _masked_advice(folder) -> str:
    return by_id(forensics.analyze(folder, check_checkpoints=False).causes)["masked_nan_loss"].suggestion


def test_resume_point_is_before_the_divergence_not_the_first_zero_loss(tmp_path):
    """A loss that climbs many-fold from step 30 and is logged as 0.0 from step 60 (the NaN filter): the weights were
    harmed from 30, so a checkpoint saved at 50 is no place to resume from."""
    losses = [0.68, 0.66, 1.3, 1.5, 31.4, 0.0, 0.0]
    rows = [{"loss": v, "learning_rate": 3e-5, "epoch": 0.3 * (i + 1), "step": 10 * (i + 1)}
            for i, v in enumerate(losses)]
    advice = _masked_advice(_trainer_state(tmp_path / "run", rows))
    assert "before step 30" in advice, advice
    assert "saved before it" not in advice


def test_resume_point_is_before_a_nan_eval_loss_that_came_first(tmp_path):
    """Evaluation NaN from the first eval (the weights it ran were NaN), the training loss logged as 0.0 only later."""
    rows = []
    for step, loss in ((100, 2.1), (200, 1.4), (300, 1.1), (400, 0.0)):
        rows.append({"loss": loss, "learning_rate": 2e-5, "epoch": step / 400, "step": step})
        rows.append({"eval_loss": NAN, "epoch": step / 400, "step": step})
    advice = _masked_advice(_trainer_state(tmp_path / "run", rows))
    assert "before step 100" in advice, advice


def test_no_resume_point_where_the_rate_was_zero_before_the_break():
    """The learning rate logged as 0.0 at every step before the loss blew up (a scheduler held by skipped steps): no
    update was made, so no checkpoint before the break is better than the start."""
    steps = range(1, 21)
    tl = timeline(loss={s: 500.0 if s < 15 else 6e7 if s == 15 else 0.0 for s in steps},
                  learning_rate={s: 0.0 if s < 15 else 3e-6 * (s - 14) for s in steps})
    spike = Finding("loss_spike", "warning", 15, "spike", metric="loss", evidence={"recovered": False})
    masked = Finding("masked_nan_loss", "error", 16, "masked", metric="loss")
    advice = by_id(causes(config(), tl, [spike, masked]))["masked_nan_loss"].suggestion
    assert "resume from" not in advice.lower(), advice
    assert "No update was made before step 15" in advice


def test_a_nan_that_is_itself_the_first_harm_keeps_its_own_resume_point(tmp_path):
    """Not fire: a run that learned (loss 2.0 -> 1.2, a spike at 40 it recovered from) then went NaN at step 80 (loss
    0.0, grad_norm NaN): the resume point is before the NaN itself."""
    rows = []
    for step in range(10, 110, 10):
        loss = 0.0 if step >= 80 else 9.0 if step == 40 else 2.0 - step / 100
        grad = NAN if step >= 80 else 1.0
        rows.append({"loss": loss, "grad_norm": grad, "learning_rate": 1e-4, "epoch": step / 100, "step": step})
    advice = _masked_advice(_trainer_state(tmp_path / "run", rows))
    assert "resume from a checkpoint saved before it" in advice, advice
