"""A run whose files say neither its method nor its objective, at a rate above every fine-tuning recipe yet not beyond
pre-training's (an encoder pre-trained with LAMB at 6e-3, a T5 at a constant 1e-3), is told that no range of the table
fits, not given a decoder fine-tuning range to lower it to; a rate past every recipe is still told to come down."""
from __future__ import annotations

import math

from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, timeline

NAN = math.nan
STEPS = range(10, 350, 10)


def _broke_at(lr: float):
    tl = timeline(learning_rate={s: lr for s in STEPS}, loss={s: 7.0 if s < 340 else NAN for s in STEPS},
                  loss_scale={s: 2.0 ** 16 if s < 340 else 3.6e-12 for s in STEPS})
    findings = [Finding("nonfinite_metric", "error", 340, "NaN", metric="loss"),
                Finding("loss_scale_overflow", "error", 340, "scale fell", metric="loss_scale")]
    return by_id(causes(config(fp16=True), tl, findings))


def test_a_pre_training_scale_rate_of_unknown_method_and_objective_gets_no_fine_tuning_range():
    found = _broke_at(6e-3)
    for cause in ("lr_too_high", "fp16_overflow"):
        advice = found[cause].suggestion
        assert "no range in the table fits" in advice.lower(), advice
        assert "Lower the learning rate" not in advice and "lower the learning rate" not in advice, advice


def test_a_rate_past_every_recipe_is_still_told_to_come_down():
    """Not fire: 0.05, ten times past pre-training's ceiling as well (a LoRA fine-tune run at 5e-2)."""
    advice = _broke_at(5e-2)["lr_too_high"].suggestion
    assert advice.startswith("Lower the learning rate"), advice
    assert "no range in the table fits" not in advice.lower()
