"""An fp16 overflow that comes at the end of a many-fold grad_norm growth is what the growth ended in, not the first
cause: 'possible', with the growth named; and a LoRA run's rate within what adapters use (up to three times the top of
the range, where lr_too_high does not fire) is not told to be lowered."""
from __future__ import annotations

import math

from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, timeline

NAN = math.nan
STEPS = range(10, 1210, 10)


def _grad(rising_from: int, overflow_at: int) -> dict[int, float]:
    """grad_norm about 0.2, growing 10x a logged step from `rising_from`, NaN (a skipped step) at `overflow_at`."""
    return {s: NAN if s == overflow_at else 0.2 * 10 ** max(0, (s - rising_from) // 10) if s < overflow_at else 0.3
            for s in STEPS}


def _run(grad, lr, findings, method="lora"):
    tl = timeline(grad_norm=grad, learning_rate={s: lr for s in STEPS},
                  loss={s: 0.9 if s < 900 else 2.5 for s in STEPS})
    return by_id(causes(config(fp16=True, method=method), tl, findings))


SKIP = Finding("skipped_steps", "warning", 470, "skipped", metric="grad_norm")
DIVERGED = Finding("divergence", "error", 900, "diverges", metric="loss")


def test_an_overflow_after_the_gradient_grew_many_fold_is_possible_not_likely():
    found = _run(_grad(rising_from=430, overflow_at=470), 3e-4, [SKIP, DIVERGED])
    fp16 = found["fp16_overflow"]
    assert fp16.confidence == "possible"
    assert any("grad_norm grew" in e and "step 470" in e for e in fp16.evidence), fp16.evidence


def test_a_lora_rate_within_the_adapter_ceiling_is_not_told_to_be_lowered():
    found = _run(_grad(rising_from=430, overflow_at=470), 3e-4, [SKIP, DIVERGED])
    assert "lr_too_high" not in found
    assert "Lower the learning rate" not in found["fp16_overflow"].suggestion
    assert "not too high by itself" in found["fp16_overflow"].suggestion


def test_an_overflow_out_of_a_steady_gradient_stays_likely():
    """Not fire: grad_norm steady at 0.2, then non-finite from step 900 to the end (broken): the overflow is the
    first sign, and stays 'likely'."""
    grad = {s: 0.2 if s < 900 else NAN for s in STEPS}
    nan = Finding("nonfinite_metric", "error", 900, "NaN", metric="grad_norm")
    assert _run(grad, 2e-4, [nan])["fp16_overflow"].confidence == "likely"


def test_a_lora_rate_above_the_adapter_ceiling_is_still_told_to_be_lowered():
    """Not fire: LoRA at 1e-3, past three times the range's top: lowering it stays the advice (lr_too_high's own,
    which the fp16 advice points at rather than repeating: fx-advice2, ccccai239)."""
    grad = {s: 0.2 if s < 900 else NAN for s in STEPS}
    nan = Finding("nonfinite_metric", "error", 900, "NaN", metric="grad_norm")
    found = _run(grad, 1e-3, [nan])
    assert "Lower the learning rate" in found["lr_too_high"].suggestion
    assert f'see the cause "{found["lr_too_high"].title}"' in found["fp16_overflow"].suggestion
