"""A loss rise counts as a sign of a learning rate too high only where it began with the rate at or near its peak: a
divergence that starts long after the peak, while the rate decays, is no precursor of its own ('likely' needs one)."""
from __future__ import annotations

from forensics.findings import Finding
from tests.test_causes import by_id, causes, config, timeline

STEPS = range(50, 20050, 50)


def _divergence(step: int) -> Finding:
    return Finding("divergence", "error", step, f"loss diverges from step {step}", metric="loss")


def _loss_rising_from(onset: int) -> dict[int, float]:
    return {s: 1.9 if s < onset else 1.9 + (s - onset) / 1000 for s in STEPS}


def test_a_divergence_long_after_the_peak_on_a_decaying_rate_is_not_its_own_precursor():
    """Linear decay from 1e-3 at step 50; the loss climbs from step 8250, with the rate 16% under its peak."""
    decaying = {s: 1e-3 * (1 - s / 52000) for s in STEPS}
    tl = timeline(learning_rate=decaying, loss=_loss_rising_from(8250))
    found = by_id(causes(config(method="full"), tl, [_divergence(8250)]))
    lr = found.get("lr_too_high")
    assert lr is None or lr.confidence == "possible"
    if lr is not None:
        assert not any("before anything else broke" in e for e in lr.evidence), lr.evidence
        assert any("falling" in e for e in lr.evidence), lr.evidence


def test_a_divergence_at_the_peak_rate_still_points_at_the_rate():
    """Not fire: a constant 1e-3 for a full fine-tune and the loss climbing from step 8250: the rate is at its peak
    when the loss rises, which stays the precursor, and the cause 'likely'."""
    tl = timeline(learning_rate={s: 1e-3 for s in STEPS}, loss=_loss_rising_from(8250))
    lr = by_id(causes(config(method="full"), tl, [_divergence(8250)]))["lr_too_high"]
    assert lr.confidence == "likely"
    assert any("the loss rose from step 8250" in e for e in lr.evidence)
