"""The chain: which finding explains which (`caused_by`), and what that does to severities.

Rules, applied to the findings of one history:

1. Non-finite metrics: the earliest one is the root (at the same step a NaN `loss` comes
   before the NaN `grad_norm` it produced, and both before eval/other metrics); every later
   non-finite metric and a masked NaN loss are caused by it.
2. A learning-rate jump outside the schedule (`lr_anomaly` with a factor) shortly before a
   grad_norm spike, a divergence or the root non-finite metric is their cause, within
   `chain_window_points` logged points; it takes the effect's severity (a jump that blew the
   run up is the first incident, as in LR 0.0028 -> 5.0 then NaN).
3. A grad_norm spike shortly before a breaking event (the root non-finite metric, a masked NaN
   loss with no root, a loss collapse, a divergence) is its cause when the event comes within
   `chain_window_points` logged grad_norm points of it or before it settled; for a divergence a
   loss spike counts the same way. The spike then takes the event's severity: a spike that led
   to a NaN, a collapse or a divergence is an error.
4. A loss spike on a step the fp16 loss scaler skipped is caused by that skip (the batch whose
   gradients overflowed).
5. A non-finite metric that came back finite, right before (within `chain_window_points` logged
   points) a model that never moved again from there (`never_learned` or `no_learning_signal` with
   grad_norm exactly 0, to the end of the log), is its cause and an error: the update that went
   non-finite is where the model stopped (elena-lyulina's Megatron benchmark: grad norm NaN at
   iteration 1, then grad norm 0.000 and the loss at ln(vocabulary) to the end).
6. An fp16 loss-scale collapse (`loss_scale_overflow`) at or after the step where the loss itself went non-finite,
   while it still was, is caused by it: a NaN loss overflows every gradient, so the scaler skips every step and halves
   its scale for ever (NVIDIA DeepLearningExamples issue 252: `Step:338 ... Loss = nan` and apex halving the scale to
   1e-12 while the step stays at 338).
7. A grad_norm spike one to `_PRECURSOR_POINTS` logged grad_norm points before a loss spike of the same
   severity (not at the same step: there the gradient is the root, as rule 1 reads it) is that spike's
   precursor, one event read from the gradient first: its evidence names the loss spike (`precursor_of`),
   which `first_incident_of` names in its place - the loss is what the owner saw (a Phi-3 LoRA: grad_norm 1.93 at step
   430 and 9.4 at 440, the loss 0.043 -> 0.126 -> 0.206 at 440-450). A precursor that is itself the cause of something
   (rule 2/3) keeps its place.
"""
from __future__ import annotations

from dataclasses import replace

from ..config import Thresholds
from ..findings import Finding
from .metrics import GRAD_NORM, LOSS, LR, Metrics

_BREAKING = ("loss_collapse", "divergence", "masked_nan_loss")
_AFTER_LR_JUMP = ("grad_norm_spike", "loss_spike", "divergence", "nonfinite_metric")
_NONFINITE_ORDER = {LOSS: 0, GRAD_NORM: 1}


def link_chain(findings: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """The same findings with `caused_by` set and linked spikes raised; order kept."""
    found = list(findings)
    root = _link_nonfinite(found)
    for i, effect in enumerate(found):
        breaking = effect is root or (effect.kind in _BREAKING and effect.caused_by is None)
        if not breaking:
            continue
        j = _spike_before(found, effect, metrics, thresholds)
        if j is None:
            continue
        found[i] = replace(effect, caused_by=found[j].key)
        if effect.severity == "error":
            found[j] = replace(found[j], severity="error")
    found = _link_scale_collapse_after_nan_loss(found, root)
    found = _link_dead_after_nonfinite(link_skipped_batches(_link_lr_jumps(found, metrics, thresholds)),
                                       metrics, thresholds)
    return _mark_precursors(found, metrics)


_PRECURSOR_POINTS = 2  # a grad_norm spike this many logged points before a loss spike or fewer is its onset


def _mark_precursors(found: list[Finding], metrics: Metrics) -> list[Finding]:
    """Rule 7 of the module docstring."""
    grad = metrics.get(GRAD_NORM)
    causes = {f.caused_by for f in found}
    for i, early in enumerate(found):
        if early.kind != "grad_norm_spike" or grad is None or early.key in causes:
            continue
        loss_spike = next((f for f in found if f.kind == "loss_spike" and f.severity == early.severity
                           and f.abandoned == early.abandoned and f.step > early.step
                           and int(((grad.index > early.step) & (grad.index <= f.step)).sum()) <= _PRECURSOR_POINTS),
                          None)
        if loss_spike is not None:
            found[i] = replace(early, evidence={**early.evidence, "precursor_of": loss_spike.key})
    return found


def _link_scale_collapse_after_nan_loss(found: list[Finding], root: Finding | None) -> list[Finding]:
    """Rule 6 of the module docstring."""
    if root is None or root.metric != LOSS:
        return found
    recovered = root.evidence.get("recovered_at") if root.evidence.get("recovered") else None
    return [replace(f, caused_by=root.key) if f.kind == "loss_scale_overflow" and f.caused_by is None
            and root.step <= f.step and (recovered is None or f.step < recovered) else f for f in found]


_DEAD = ("never_learned", "no_learning_signal")


def _link_dead_after_nonfinite(found: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """Rule 5 of the module docstring."""
    grad = metrics.get(GRAD_NORM)
    for i, dead in enumerate(found):
        if dead.kind not in _DEAD or dead.caused_by is not None or grad is None:
            continue
        after = grad[grad.index >= dead.step]
        if after.empty or not (after.to_numpy() == 0.0).all():
            continue  # a model that never moved: its gradient exactly 0 from there on
        before = grad.index[grad.index < dead.step][-thresholds.chain_window_points:]
        j = next((j for j, f in enumerate(found) if f.kind == "nonfinite_metric" and f.step in before), None)
        if j is not None:
            found[i] = replace(dead, caused_by=found[j].key)
            found[j] = replace(found[j], severity="error")
    return found


def link_skipped_batches(found: list[Finding]) -> list[Finding]:
    """A loss spike on a step the fp16 scaler skipped is that batch: its gradients overflowed and the
    update was thrown away, so the skipped step explains it (and comes first)."""
    skipped: dict[int, Finding] = {}  # each skipped step -> the (first) skipped_steps finding that holds it
    for f in found:
        if f.kind == "skipped_steps":
            for step in f.evidence.get("steps", []):
                skipped.setdefault(int(step), f)
    return [replace(f, caused_by=skipped[f.step].key) if f.kind == "loss_spike" and f.caused_by is None
            and f.step in skipped else f for f in found]


def _link_lr_jumps(found: list[Finding], metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """Point the first spike, divergence or non-finite root after a learning-rate jump at that jump."""
    lr = metrics.get(LR)
    for j, jump in enumerate(found):
        if jump.kind != "lr_anomaly" or "factor" not in jump.evidence:
            continue
        for i, effect in enumerate(found):
            if effect.caused_by is not None or effect.kind not in _AFTER_LR_JUMP or effect.step < jump.step:
                continue
            between = 0 if lr is None else int(((lr.index > jump.step) & (lr.index <= effect.step)).sum())
            if between <= thresholds.chain_window_points:
                found[i] = replace(effect, caused_by=jump.key)
                if effect.severity == "error":
                    found[j] = replace(found[j], severity="error")
                break
    return found


def _link_nonfinite(found: list[Finding]) -> Finding | None:
    """Point every later non-finite metric and masked loss at the root; return the root (or None)."""
    nonfinite = [f for f in found if f.kind == "nonfinite_metric"]
    if not nonfinite:
        return None
    root = min(nonfinite, key=lambda f: (f.step, _NONFINITE_ORDER.get(f.metric, 2), f.metric or ""))
    for i, f in enumerate(found):
        if f is root or f.caused_by is not None:
            continue
        if f.kind == "nonfinite_metric" or (f.kind == "masked_nan_loss" and root.step <= f.step):
            found[i] = replace(f, caused_by=root.key)
    return root


def _spike_before(found: list[Finding], effect: Finding, metrics: Metrics, thresholds: Thresholds) -> int | None:
    """Index of the latest spike that explains `effect` (a grad_norm spike; for a divergence, a loss spike
    too: a loss that jumped and never settled before it diverged), or None."""
    kinds = ("grad_norm_spike", "loss_spike") if effect.kind == "divergence" else ("grad_norm_spike",)
    best = None
    for j, f in enumerate(found):
        if f.kind not in kinds or f.step > effect.step or (f.kind == "loss_spike" and f.step == effect.step):
            continue  # a loss "spike" starting with the divergence is its onset: the divergence names it
        series = metrics.get(GRAD_NORM if f.kind == "grad_norm_spike" else LOSS)
        between = 0 if series is None else int(((series.index > f.step) & (series.index <= effect.step)).sum())
        # a storm's "not back to normal" is its last spike's: its first ones (the step it is dated at) may have
        # settled long before, so a storm explains an event only when it starts just before it
        storm = f.evidence.get("storm", False)
        unsettled = not storm and (f.evidence.get("recovered_at") is None or f.evidence["recovered_at"] >= effect.step)
        if between <= thresholds.chain_window_points or unsettled:
            if best is None or f.step > found[best].step:
                best = j
    return best


def link_weight_damage(findings: list[Finding]) -> list[Finding]:
    """Link non-finite checkpoint weights to the metric incident that came at or before them.

    The weights went bad through the updates the logs saw: the latest standing metric error at or
    before the checkpoint's step (its chain root is found by `caused_by`) explains them. A masked
    NaN loss is what HF's logging filter made of non-finite gradients: it hid the cause, it did
    not cause the damage, so it is passed over whenever the non-finite metric itself is there.
    """
    errors = [f for f in findings if f.severity == "error" and not f.abandoned and f.kind != "nonfinite_weights"]
    causal = [f for f in errors if f.kind != "masked_nan_loss"]
    metric_errors = causal or errors
    out = []
    for f in findings:
        if f.kind == "nonfinite_weights" and f.caused_by is None:
            before = [m for m in metric_errors if m.step <= f.step]
            if before:
                f = replace(f, caused_by=max(before, key=lambda m: m.step).key)
        out.append(f)
    return out
