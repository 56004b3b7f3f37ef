"""Tests of the start-above-the-guess and impossible-loss rules: a start that settles, a summed loss.

From the rules the lead mended from the day-6 corpus batches, each with the real case it came from
(tests/realworld)."""
from __future__ import annotations

import json

import forensics


def _trainer_run(folder, losses, vocab_size):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": vocab_size}))
    history = [{"step": i + 1, "loss": v, "learning_rate": 1e-4, "grad_norm": 1.0} for i, v in enumerate(losses)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(losses), "log_history": history}))
    return folder


def test_a_start_far_above_the_guess_that_settles_at_it_is_a_start_above_the_guess_not_a_sum(tmp_path):
    """FPT-VVU's ViVidBot stage 1: 39.5 at the start, four times ln 20486 = 9.93, then 9.7-10.1 to the end. A sum
    over a step's tokens or samples would stay a multiple of the per-token level; this loss is a per-token mean
    whose model started confidently wrong. It was named impossible_loss, 'the logged loss is a sum'."""
    losses = [39.5, 36.0, 30.0, 22.0, 14.0, 11.0] + [9.93 + 0.15 * ((-1) ** i) for i in range(30)]
    a = forensics.analyze(_trainer_run(tmp_path / "run", losses, 20486))
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 1), a.findings
    assert "sum" not in a.first_incident.message


def test_a_summed_loss_that_stays_a_multiple_of_the_guess_is_still_impossible_for_a_mean(tmp_path):
    losses = [80.0 - i for i in range(36)]  # eight times a per-token loss, falling as the run learns
    a = forensics.analyze(_trainer_run(tmp_path / "run", losses, 32000))
    assert any(f.kind == "impossible_loss" and f.step == 1 for f in a.findings), a.findings
