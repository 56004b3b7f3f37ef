"""What the run's own metrics show before a break: the precursors that point at the learning rate (a jump of the rate,
a loss rise at its peak, a climbing grad_norm), why none is named where none is, and a gradient already NaN at the
break (which clipping cannot act on).

A break with a precursor is the learning rate's "likely" (`optimization.lr_too_high`); one without is a sudden break
(`optimization.sudden_break`: data or numerics); a warm-up is asked about only where a precursor or the trouble's
timing leaves it in question (`warmup.no_warmup`).
"""
from __future__ import annotations

import numpy as np

from ..analyzers.metrics import format_rate
from .evidence import CLIMB_MIN_POINTS, Facts, evidence_value, grad_norm_climb_before, lr_points

_PRECURSOR_CLIMB = 2.0  # grad_norm this many times its earlier level just before the break


def lr_precursor(facts: Facts) -> str | None:
    """What in the run's own metrics points at the learning rate before the break, or None (a sudden break)."""
    jumps = [f for f in facts.of_kind("lr_anomaly") if "factor" in f.evidence]
    if jumps:
        return f"the learning rate jumped {evidence_value(jumps[0].evidence['factor'])}x at step {jumps[0].step}"
    divergence = facts.of_kind("divergence")
    if divergence and _rise_readable(facts) and _rise_on_a_falling_rate(facts, divergence[0].step) is None:
        return _loss_rise(facts, divergence[0].step)
    incident = next((f for f in facts.live_findings if f.severity == "error"), None)
    if incident is None or facts.series("grad_norm").empty:
        return None
    climb = grad_norm_climb_before(facts, incident.step, _PRECURSOR_CLIMB)
    if climb is not None:
        return (f"grad_norm climbed from about {evidence_value(climb[0])} to {evidence_value(climb[1])} over the "
                f"logged points before step {incident.step}")
    spikes = [f for f in facts.of_kind("grad_norm_spike") if f.step <= incident.step]
    if spikes:
        return f"grad_norm spiked at step {spikes[-1].step} before the break"
    return None


_RISE_POINTS = 3  # a loss rise is read from a level and the points that leave it: one logged point shows neither
_EARLIER = {"grad_norm_spike": "grad_norm spiked", "loss_spike": "the loss spiked", "lr_anomaly": "the learning rate "
            "jumped", "nonfinite_metric": "a metric went non-finite", "skipped_steps": "the fp16 scaler skipped steps"}


# A loss rise that began with the logged rate under this fraction of its peak began on a falling rate, after the
# rate had been higher for a while without it: a rate too high does its harm where it is highest.
_AT_PEAK = 0.9


def _rise_on_a_falling_rate(facts: Facts, step: int) -> str | None:
    """Why a loss rise from `step` does not point at the learning rate, where it began after the rate had fallen from
    its peak (under `_AT_PEAK` of it); None where the rate was at or near its peak then, or not logged."""
    lr = lr_points(facts.timeline)
    upto = lr[lr.index <= step]
    if len(upto) < 2 or float(upto.iloc[-1]) >= _AT_PEAK * float(upto.max()):
        return None
    return (f"the loss rose from step {step}, with the learning rate at {evidence_value(float(upto.iloc[-1]))} and "
            f"falling, {int(step - upto.idxmax())} steps after its peak of {evidence_value(float(upto.max()))} "
            f"(step {int(upto.idxmax())}): a rise that began long after the peak, on a falling rate, is no sign of a "
            "rate too high")


def falling_rate_rise(facts: Facts) -> int | None:
    """The step a divergence began at, where it began on a falling rate long after the peak (`_rise_on_a_falling_rate`):
    xxw1995's loss rose at step 14950 on a rate down to 7e-4 from its 1e-3 at step 50, and lr_too_high said in one
    breath that this is no sign of a rate too high and "Lower the learning rate"; None otherwise."""
    divergence = facts.of_kind("divergence")
    if divergence and _rise_on_a_falling_rate(facts, divergence[0].step) is not None:
        return divergence[0].step
    return None


def no_precursor(facts: Facts) -> str:
    """Why no precursor is named: a loss rise that began on a falling rate long after its peak; else a log of fewer
    than `_RISE_POINTS` logged steps up to the break (an end-of-training summary alone) cannot show one, which is not
    the same as a log that shows none."""
    divergence = facts.of_kind("divergence")
    falling = _rise_on_a_falling_rate(facts, divergence[0].step) if divergence else None
    if falling is not None:
        return falling
    first = facts.first_unstable
    steps = facts.timeline.final()["step"]
    if first is not None:
        steps = steps[steps <= first.step]
    n = int(steps.nunique())
    if n >= _RISE_POINTS:
        return "no precursor in the logs (no LR jump, no rising loss or grad_norm before the break)"
    points = {0: "no logged point", 1: "one logged point"}.get(n, f"{n} logged points")
    upto = f" up to the break at step {first.step}" if first is not None else ""
    return f"{points}{upto}: no precursor can be read"


def _rise_readable(facts: Facts) -> bool:
    """The log has enough finite loss points for a rise to be read from it as a precursor (an end-of-training summary
    alone is one number, with nothing before it)."""
    loss = facts.series("loss").to_numpy(dtype="float64")
    return int(np.isfinite(loss).sum()) >= _RISE_POINTS


def _loss_rise(facts: Facts, step: int) -> str:
    """The loss rise as a precursor, in the order the run's own findings give: "before anything else broke" only
    where nothing the optimizer could explain came earlier (a grad_norm spike 44 steps before the rise came first)."""
    earlier = [f for f in facts.live_findings if f.step < step and f.kind in _EARLIER
               and f.severity in ("warning", "error")]
    if not earlier:
        return f"the loss rose from step {step} before anything else broke"
    first = min(earlier, key=lambda f: f.step)
    return f"{_EARLIER[first.kind]} at step {first.step}, then the loss rose from step {step}"


_WITHOUT_END = 10.0  # a rate still climbing at the log's last point, this many times its level at the trouble


def rate_rose_without_end(facts: Facts) -> str | None:
    """What says the logged rate never stopped rising: it climbed through the trouble to the log's last point, which
    came well after the trouble, ending `_WITHOUT_END` times or more above its level there; None otherwise. A warm-up
    ends at a peak; a rate that grows until the log stops is a schedule that raises it (ChristianPE1_transformer-test's
    plateau scheduler multiplied it by 1.05 every epoch: 0.015, 1.546 where the loss diverged at epoch 117, 2e8 at
    epoch 500), and was told to "keep the warm-up"."""
    lr, first = lr_points(facts.timeline), facts.first_unstable
    if first is None:
        return None
    at = lr[lr.index <= first.step]
    after = lr[lr.index >= first.step]
    if len(at) < 2 or len(after) < _RISE_POINTS or int(after.index[-1]) < 2 * max(first.step, 1):
        return None
    climbing = bool(np.all(np.diff(lr.to_numpy()) >= 0))
    if not climbing or float(lr.iloc[-1]) < _WITHOUT_END * float(at.iloc[-1]):
        return None
    return (f"the logged rate never stopped rising: {format_rate(float(lr.iloc[0]))} at step {int(lr.index[0])}, "
            f"{format_rate(float(at.iloc[-1]))} at the trouble (step {int(at.index[-1])}), "
            f"{format_rate(float(lr.iloc[-1]))} at the last logged step {int(lr.index[-1])}")


def nan_gradient_at_the_break(facts: Facts) -> int | None:
    """The step grad_norm went non-finite, where it did at or before the first trouble with no finite norm logged
    before it, or out of a steady one (`CLIMB_MIN_POINTS` or more points and no `lr_precursor` climb): clipping cannot
    act on a NaN norm (`clipping_cannot_help`), nor had a growth to hold back. None otherwise, and where a few finite
    points cannot tell whether the gradient was growing."""
    bad, first = facts.nonfinite_steps("grad_norm"), facts.first_unstable
    if not bad or first is None or bad[0] > first.step:
        return None
    grad = facts.series("grad_norm")
    finite_before = int(np.isfinite(grad[grad.index < bad[0]].to_numpy(dtype="float64")).sum())
    if finite_before == 0:
        return bad[0]
    steady = finite_before >= CLIMB_MIN_POINTS and not grad_norm_climb_before(facts, bad[0], _PRECURSOR_CLIMB)
    return bad[0] if steady else None
