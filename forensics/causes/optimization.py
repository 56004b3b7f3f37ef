"""Cause rules about the optimizer settings: learning rate, warm-up and gradient clipping.

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`.
"""
from __future__ import annotations

import numpy as np

from ..findings import Cause, plural
from ..ingest.tracker_config import FROZEN_LANGUAGE_MODEL
from ..profile.objective import pretrained_base
from ..restarts import epoch_past_the_start
from .evidence import (CLIMB_MIN_POINTS, Facts, first_bad_checkpoint, evidence_value, grad_norm_climb_before,
                       lr_points, max_finite, peak_lr, precision_sources, resume_advice, said)
from .lr_ranges import OBJECTIVES_WITH_ROWS, LrRange, lr_range, range_scope
from .setting_names import clip_setting, warm_up_advice

FAR_OUT = 5.0  # a peak rate this many times the range's ceiling is evidence by itself
# ... and this many times pre-training's ceiling (the smallest models' where the size is unknown) is out of every
# recipe, large-batch ones included (BERT-large's LAMB recipe runs at 6e-3)
_BEYOND_PRETRAINING = 10.0
_NAMES = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA", "peft": "PEFT adapters"}


def method_name(method: str, objective: str) -> str:
    """The method in words; a whole model trained from random weights is pre-training, not fine-tuning."""
    return "pre-training" if method == "full" and objective == "pretrain" else _NAMES.get(method, method)


def lr_too_high(facts: Facts) -> Cause | None:
    """Peak LR above the ceiling of the range recipes use for this run's method, objective and size.

    An unknown method is said to be unknown: the run is judged against both ranges (too high only
    past the full fine-tuning ceiling, and sure only past the adapter one) and both are given; an
    unknown objective or size is said too (`range_scope`).
    "likely" only when the run's own metrics show a precursor (the learning rate jumped, the loss
    rose, grad_norm climbed before the break); a sudden break leaves it "possible", however far
    the rate is out of range (a recipe's rate for another optimizer or objective is out of range too).
    """
    if not facts.unstable_beyond_skips or facts.before_any_update:
        return None
    peak, where = peak_lr(facts)
    if peak is None:
        return None
    method, objective, n_params = profile_of(facts)
    ranges = [lr_range("full", objective, n_params), lr_range("lora", objective, n_params)] \
        if method == "unknown" else [lr_range(method, objective, n_params)]
    if peak <= ranges[0].ceiling:
        return None
    sure = method != "unknown" or peak > ranges[-1].ceiling
    evidence = list(where) + _method_sentences(facts, method, ranges)
    precursor = lr_precursor(facts)
    evidence.append(precursor or _no_precursor(facts))
    evidence += _trouble_sentences(facts)
    if _rate_of_another_kind(facts):
        return None  # SGD, Prodigy, D-Adaptation: the recipes' Adam-family rates do not judge theirs
    if method == "unknown" and _language_model_frozen(facts):
        return None  # a projector stage (LLaVA's): neither full fine-tuning's nor an adapter's rates judge it
    sgd = _sgd_scale(facts, peak)
    far = peak >= FAR_OUT * ranges[-1].ceiling and sgd is None  # so far out of every recipe that the rate alone is evidence
    if sgd is not None:
        evidence.append(sgd)
    if far and precursor is None:
        # with the objective unknown, pre-training (and LAMB-style large-batch) recipes are not ruled out
        evidence.append(f"peak {evidence_value(peak)} is {peak / ranges[-1].ceiling:.0f}x the top of the range: "
                        + ("too far out for any recipe" if objective in OBJECTIVES_WITH_ROWS
                           or peak >= _BEYOND_PRETRAINING * lr_range("full", "pretrain", n_params or 1).ceiling else
                           "far above every fine-tuning recipe (pre-training recipes, which the unknown objective "
                           "leaves open, run higher)"))
    likely = facts.broken and sure and precursor is not None  # a rate far out of range without one stays possible
    title = (f"Learning rate {evidence_value(peak)} too high for {run_name(method, objective, n_params)}" if sure
             else f"Learning rate {evidence_value(peak)}: too high if this was full fine-tuning (method unknown)")
    advice = _lr_advice(facts, method, ranges, peak)
    rise = None if precursor else _falling_rate_rise(facts)
    if rise is not None:  # its own evidence says the rise is no sign of the rate: it does not lead with lowering it
        title = (f"Learning rate {evidence_value(peak)} above the range for {run_name(method, objective, n_params)}, "
                 "though the loss rose on a falling rate") if sure else title
        advice = (f"Look first at the batches around step {rise} and what else changed there: the loss rose on a "
                  f"falling rate, long after its peak. The rate is above what recipes use all the same: "
                  f"{advice[0].lower()}{advice[1:]}")
    if sgd is not None:
        named = _named_optimizer(facts)
        title += (" with an Adam-family optimizer " + (f"(the run names {named!r})" if named else
                                                        "(the optimizer is not known)"))
        advice = (f"With Adam or AdamW: {advice[0].lower()}{advice[1:]} With plain SGD, {evidence_value(peak)} is a usual "
                  "rate: look at the gradients first (clipping, an exploding recurrence) and at the data.")
    return Cause(
        cause="lr_too_high", confidence="likely" if likely else "possible",
        evidence=evidence, suggestion=advice, title=title,
    )


SGD_SCALE = 1.0  # no Adam-family recipe runs at a rate this high; plain SGD does (0.1 to 20)
_ADAPTIVE = ("adam", "lion", "adafactor", "lamb", "sophia", "rmsprop", "adagrad", "galore", "schedule_free")


_SELF_TUNING = ("prodigy", "dadapt", "d_adapt")  # a rate of about 1: the optimizer finds the step itself
_PLAIN = ("sgd", "momentum")  # plain SGD's rates: 0.1 to 20


def _language_model_frozen(facts: Facts) -> bool:
    """The config freezes the language model (LLaVA-style `freeze_backbone`, `tune_mm_mlp_adapter`, `freeze_llm`):
    only a small part such as the multimodal projector trains, at rates (1e-3 and up) no recipe range here covers."""
    return any(facts.config.get(flag) is True for flag in FROZEN_LANGUAGE_MODEL)


def _named_optimizer(facts: Facts) -> str | None:
    return next((str(facts.config.get(k)) for k in ("optim", "ds.optimizer.type") if facts.config.get(k)), None)


def _rate_of_another_kind(facts: Facts) -> bool:
    """The run names an optimizer whose learning rate is on another scale than Adam's (plain SGD: 0.1 to 20;
    Prodigy and D-Adaptation: about 1, the step found by the optimizer)."""
    named = (_named_optimizer(facts) or "").lower()
    return any(o in named for o in _SELF_TUNING) or (any(o in named for o in _PLAIN)
                                                     and not any(a in named for a in _ADAPTIVE))


def _sgd_scale(facts: Facts, peak: float) -> str | None:
    """Why the recipe ranges (Adam-family rates) do not judge this run's rate, or None: a rate of `SGD_SCALE` or more
    with no adaptive optimizer named is plain SGD's scale (pytorch/examples' word-level RNN language model trains at
    20), where the rate alone says nothing about the break."""
    named = _named_optimizer(facts)
    if peak < SGD_SCALE or named is not None and any(a in named.lower() for a in _ADAPTIVE):
        return None
    which = f"the optimizer is {evidence_value(named)}" if named else "no optimizer is named"
    return (f"{which}: a learning rate of {evidence_value(peak)} is far above every Adam-family recipe but usual for "
            "plain SGD (0.1 to 20), so the rate alone is no evidence of the break")


def profile_of(facts: Facts) -> tuple[str, str, int | None]:
    """(method, objective, model size) the learning-rate ranges are read for. A pre-training objective on a trained
    model (`continued_from`) is read as fine-tuning: its rates are a trained model's, not random weights' (`lr_ranges`:
    the "sft" rows cover continued pre-training)."""
    p = facts.profile
    method = p.method if p is not None else (facts.config.get("method") or "unknown")
    n = p.model_params if p is not None else facts.config.get("n_params")
    objective = p.objective if p is not None else "unknown"
    if objective == "pretrain" and continued_from(facts) is not None:
        objective = "sft"
    return method, objective, n if isinstance(n, (int, float)) else None


def continued_from(facts: Facts) -> str | None:
    """Where a run profiled as pre-training says it starts from a trained model (`pretrained_base`: a named base whose
    first loss is not at the random guess), as evidence; None otherwise. yangjunx21's continued pre-training of
    chatglm3-6b-base (first loss 2.1, ln(vocabulary) 11.1) was told to raise its 3e-6 to from-scratch rates (1.2e-4 to
    3e-4), which wreck a trained 6B model."""
    if facts.profile is None or facts.profile.objective != "pretrain":
        return None
    loss = facts.series("loss").to_numpy(dtype="float64")
    loss = loss[np.isfinite(loss)]
    base = pretrained_base(facts.config, float(loss[0]) if len(loss) else None)
    if base is None:
        return None
    return (f"continued pre-training of a trained model ({base[0]}, {base[1]}): judged by the rates recipes fine-tune "
            "a trained model at, not by those of pre-training from random weights")


def run_name(method: str, objective: str, n_params: int | None) -> str:
    what = method_name(method, objective) if method in _NAMES else "a run of unknown method"
    return for_objective(what, objective) + (f" of a {_size(n_params)} model" if n_params else "")


def for_objective(what: str, objective: str) -> str:
    """A method in words with the objective its range is for, where that is not supervised fine-tuning's: a DPO or
    GRPO rate is a tenth to a hundredth of an SFT one, so "5e-06 to 5e-05 for LoRA" alone reads as LoRA's range and
    contradicts the 1e-4 to 2e-4 an SFT LoRA runs at (prchigoyal01's LoRA DPO, srinath-manda's full GRPO)."""
    return f"{what} ({objective})" if objective in ("preference", "rl") else what


def _size(n: float) -> str:
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"


def _method_sentences(facts: Facts, method: str, ranges: list[LrRange]) -> list[str]:
    _, objective, n_params = profile_of(facts)
    scope = range_scope(objective, n_params, method)
    scoped = [f"those ranges are {scope}"] if scope else []
    if method == "unknown":
        return [f"fine-tuning method unknown ({_method_unread(facts)}): recipes "
                f"use {ranges[0].describe()} for full fine-tuning ({ranges[0].source}) and {ranges[1].describe()} "
                f"for LoRA/QLoRA ({ranges[1].source})"] + scoped
    where = (facts.profile.evidence.get("method") if facts.profile else None) or facts.config.source_of("method")
    continued = continued_from(facts)
    return [f"method: {method_name(method, objective)} ({where})"] + ([continued] if continued else []) + \
        [f"recipes for it use {ranges[0].describe()} ({ranges[0].source})"] + scoped


def _method_unread(facts: Facts) -> str:
    """Why the method is unknown: nothing says it, or a banner's trainable count that cannot tell it alone (no model
    size beside it: the whole of a small model or an adapter on a large one)."""
    counted = next((b for b in facts.timeline.banners if b.trainable_params and not b.all_params), None)
    if counted is None:
        return "no adapter files, framework config, banner or name says it"
    return (f"the log's banner counts {counted.trainable_params:,} trainable parameters but not the model's size, so "
            "whether that is the whole model or an adapter on a larger one is not known")


def _lr_advice(facts: Facts, method: str, ranges: list[LrRange], peak: float) -> str:
    steadying = _steadying_advice(facts, method)
    unfitted = _no_row_fits(facts, peak)
    if unfitted is not None:
        advice = f"{unfitted[0].upper()}{unfitted[1:]}; {steadying}"
    elif method == "unknown" and peak <= ranges[-1].ceiling:
        objective = profile_of(facts)[1]
        advice = (f"The method is unknown and decides this: for {for_objective('full fine-tuning', objective)} lower "
                  f"the learning rate to {ranges[0].describe()}; for {for_objective('LoRA/QLoRA adapters', objective)} "
                  f"{evidence_value(peak)} "
                  f"{_against(peak, ranges[1])}, so look elsewhere first. Either way {steadying}")
    else:
        target = ranges_in_words(method, profile_of(facts)[1], ranges, unknown="(the method is unknown)")
        scope = range_scope(*profile_of(facts)[1:], method)
        advice = f"Lower the learning rate ({target}{'; those are ' + scope if scope else ''}); {steadying}"
    resume = resume_advice(facts)  # only a checkpoint saved before the trouble, named; none for a run that got past it
    return advice + (f", and {resume}" if resume else "") + "."


def rate_for_the_run(facts: Facts) -> str:
    """The learning-rate advice for the run's method, objective and size (`lr_ranges`), as a clause: "lower" only where
    its peak is above the range (for an unknown method, given both ranges, above the full fine-tuning one).

    Where the peak is within or under the range a lower rate is no fix, and advice that asks for one sends the run
    the wrong way (a QLoRA run at 5e-5 is already under 1e-4 to 2e-4). An optimizer on another scale than Adam's
    (plain SGD, Prodigy) is not judged by the recipes' ranges at all."""
    method, objective, n_params = profile_of(facts)
    if _rate_of_another_kind(facts):
        return (f"judge the learning rate by {_named_optimizer(facts)}'s own usual rates (the recipes' ranges are "
                "Adam-family rates)")
    if method == "unknown" and _language_model_frozen(facts):  # lr_too_high's own exception
        return ("judge the learning rate by the stage's own recipe: the language model is frozen, so only a small part "
                "such as the projector trains, at rates no fine-tuning range here covers")
    ranges = [lr_range("full", objective, n_params), lr_range("lora", objective, n_params)] \
        if method == "unknown" else [lr_range(method, objective, n_params)]
    what, peak = ranges_in_words(method, objective, ranges), peak_lr(facts)[0]
    if peak is None:
        return f"check the learning rate against the usual {what} (the run's rate is not in its files)"
    if peak < ranges[0].low:
        return f"the learning rate ({evidence_value(peak)}) is below the usual {what}: a lower one is no fix"
    if peak <= ranges[0].high:
        where = "within" if method != "unknown" else "not above"
        return f"the learning rate ({evidence_value(peak)}) is {where} the usual {what}: keep it there"
    if peak <= ranges[0].ceiling:  # lr_too_high's own bound (an adapter's up to three times the top): not too high
        return f"the learning rate ({evidence_value(peak)}) {_against(peak, ranges[0])}: not too high by itself"
    unfitted = _no_row_fits(facts, peak)
    if unfitted is not None:
        return unfitted
    own = lr_too_high(facts)
    if own is not None:  # its own cause gives the range: ccccai239's fp16 advice said it again, word for word
        return f"the learning rate ({evidence_value(peak)}) is too high (see the cause \"{own.title}\")"
    if method == "unknown" and objective not in OBJECTIVES_WITH_ROWS:
        return f"lower the learning rate if it is above the usual for the run's method and objective ({what})"
    return f"lower the learning rate ({what})"


def _no_row_fits(facts: Facts, peak: float) -> str | None:
    """Where neither the method nor the objective is known and the peak is above every fine-tuning recipe's ceiling yet
    within what pre-training and large-batch recipes run at (under `_BEYOND_PRETRAINING` times pre-training's): a
    clause saying no range of the table fits, in place of a fine-tuning range the run may not be (BERT pre-training
    with LAMB at 6e-3, T5 at a constant 1e-3); None otherwise."""
    method, objective, n_params = profile_of(facts)
    if method != "unknown" or objective in OBJECTIVES_WITH_ROWS:
        return None
    full, adapter = lr_range("full", objective, n_params), lr_range("lora", objective, n_params)
    pretraining = lr_range("full", "pretrain", n_params or 1)
    if not adapter.ceiling < peak < _BEYOND_PRETRAINING * pretraining.ceiling:
        return None
    return (f"no range in the table fits a rate of {evidence_value(peak)} where the method is unknown and so is the "
            f"objective: it is above every fine-tuning recipe ({full.describe()} for full fine-tuning, "
            f"{adapter.describe()} for LoRA/QLoRA adapters) but not beyond pre-training recipes ({pretraining.describe()} under 1B parameters; "
            "large-batch optimizers such as LAMB run higher), so judge it by the recipe of the run's own model and "
            "optimizer")


def ranges_in_words(method: str, objective: str, ranges: list[LrRange], unknown: str | None = None) -> str:
    """The range for the run's method and objective, or both (full, then adapter) where the method is unknown, followed
    by `unknown` (or, by default, "; the method is unknown")."""
    if method == "unknown":
        if unknown is None:
            unknown = "; the method is unknown" if objective in OBJECTIVES_WITH_ROWS else \
                "; the method and objective are unknown"
        return (f"{ranges[0].describe()} for {for_objective(method_name('full', objective), objective)}, "
                f"{ranges[1].describe()} for {for_objective('LoRA/QLoRA adapters', objective)}"
                f"{unknown if unknown.startswith(';') else ' ' + unknown}")
    return f"{ranges[0].describe()} for {run_name(method, objective, None)}"


_USUAL_CLIP = 1.0  # the clipping norm recipes use (adapters also 0.3)


def _steadying_advice(facts: Facts, method: str) -> str:
    """Warm-up and clipping advice that does not ask the run for what it already did: a warm-up its config sets or its
    log shows is kept, and a clipping norm at or under the usual one is named as the one it ran with."""
    clip = clip_setting(facts, "0.3 to 1.0" if method in ("lora", "qlora", "peft") else "1.0")
    warmed = warm_up_seen(facts)
    parts = [f"keep the warm-up ({warmed})"] if warmed else \
        [warm_up_advice(facts)] if _warm_up_in_question(facts) else []
    clipping = _clipping(facts)
    norm = clipping[0] if clipping is not None else None
    nan_from = _nan_gradient_at_the_break(facts)
    if isinstance(norm, (int, float)) and not isinstance(norm, bool) and 0 < norm <= _USUAL_CLIP:
        parts.append(f"keep clipping at {clipping[1]}")
    elif nan_from is not None:  # no advice to clip what clipping cannot act on
        parts.append(f"clipping is no fix for the gradient that was NaN from step {nan_from} (it scales by max_norm / "
                     "total_norm, NaN itself)")
    elif isinstance(norm, (int, float)) and not isinstance(norm, bool) and norm > _USUAL_CLIP:
        parts.append(f"clip with {clip} (the run clipped at {clipping[1]})")
    else:
        parts.append(f"clip with {clip}")
    return ", ".join(parts)


def _nan_gradient_at_the_break(facts: Facts) -> int | None:
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


def warm_up_seen(facts: Facts) -> str | None:
    """What says the run warmed its learning rate up, or None: a warm-up its config sets, or a logged rate that starts
    well below its peak before the trouble (`Thresholds.warmup_peak_fraction`) from a log that shows the start."""
    key = _warmup_key(facts)
    if key is not None:
        return said(facts.config, key)
    whole = lr_points(facts.timeline)
    jumps = [f.step for f in facts.of_kind("lr_anomaly") if "factor" in f.evidence]
    if jumps:
        whole = whole[whole.index < min(jumps)]  # a rate that leapt above its schedule did not warm up to there
    first = facts.first_unstable
    lr = whole[whole.index <= first.step] if first is not None else whole
    still_warming = len(lr) == 1 and first is not None
    if still_warming:
        lr = _rise_through_the_break(whole)
    if len(lr) >= 2 and _log_starts_at_the_start(facts, lr) and \
            float(lr.iloc[0]) < facts.thresholds.warmup_peak_fraction * float(lr.max()):
        rise = (f"{evidence_value(float(lr.iloc[0]))} at step {int(lr.index[0])} to "
                f"{evidence_value(float(lr.max()))} at step {int(lr.idxmax())}")
        return (f"the logged rate was still warming up at the break: it rose from {rise}" if still_warming
                else f"the logged rate rose from {rise}")
    return None


def _rise_through_the_break(lr):
    """The logged rate from its first point up to where it stops rising, where the break came at that first point: one
    point cannot show a warm-up, the climb that goes on from it can (sugarandgugu's rate, 2.5e-4 at its break at step
    58, rose to 5e-4 at step 116 and held there, and it was told to warm up)."""
    rising = np.diff(lr.to_numpy()) > 0
    top = int(np.argmin(rising)) if not rising.all() else len(rising)
    return lr.iloc[:top + 1]


def _against(peak: float, rng: LrRange) -> str:
    """Where `peak` sits against an adapter range it does not exceed the ceiling of, in words."""
    if peak < rng.low:
        return f"is below the usual {rng.describe()}"
    if peak <= rng.high:
        return f"is within the usual {rng.describe()}"
    return f"is above the usual {rng.describe()} but within what adapter runs often use (up to {evidence_value(rng.ceiling)})"


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


def _falling_rate_rise(facts: Facts) -> int | None:
    """The step a divergence began at, where it began on a falling rate long after the peak (`_rise_on_a_falling_rate`):
    xxw1995's loss rose at step 14950 on a rate down to 7e-4 from its 1e-3 at step 50, and lr_too_high said in one
    breath that this is no sign of a rate too high and "Lower the learning rate"; None otherwise."""
    divergence = facts.of_kind("divergence")
    if divergence and _rise_on_a_falling_rate(facts, divergence[0].step) is not None:
        return divergence[0].step
    return None


def _no_precursor(facts: Facts) -> str:
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


def sudden_break(facts: Facts) -> Cause | None:
    """NaN/Inf out of a calm run: flat grad_norm until the break points at data or numerics, not the LR; NaN/Inf
    before any update (`Facts.before_any_update`) points at the model as loaded, the data or the numerics."""
    if not facts.broken:
        return None
    incident = next((f for f in facts.live_findings if f.severity == "error"), None)
    if incident is None or incident.kind not in ("nonfinite_metric", "masked_nan_loss") or lr_precursor(facts):
        return None
    if facts.before_any_update and facts.first_unstable is not None and facts.first_unstable.step == incident.step:
        return _broken_from_the_start(facts, incident)
    grad = facts.series("grad_norm")
    before = grad[(grad.index < incident.step) & np.isfinite(grad.to_numpy())]
    if len(before) < 3:
        return None
    return Cause(
        cause="sudden_break", confidence="possible",
        evidence=[f"grad_norm stayed near {evidence_value(float(np.median(before)))} (at most "
                  f"{evidence_value(float(before.max()))}) up to step {int(before.index[-1])} and was non-finite "
                  f"at step {incident.step}: nothing built up before the break"],
        suggestion=(f"Look at the batches just before step {incident.step} (an empty or corrupt sample, a sequence "
                    f"longer than the model was set up for, labels all -100), {_numerics_hint(facts)} and at custom "
                    "kernels; a lower learning rate alone is unlikely to fix a sudden break."),
        title="A sudden break with no precursor: data or numerics",
    )


def _broken_from_the_start(facts: Facts, incident) -> Cause:
    """The first trouble came before any update: no learning rate, warm-up or clipping had acted on the weights."""
    why = ("the learning rate was logged as 0 up to it: no update had been made" if incident.step > 1 else
           "the first step's loss and gradient are computed on the weights as loaded, before any update")
    return Cause(
        cause="sudden_break", confidence="possible",
        evidence=[f"{incident.metric or 'the loss'} was non-finite from step {incident.step}, and {why}: the "
                  "learning rate, warm-up and clipping had not acted yet"],
        suggestion=("Look at what the first step ran on: the model as loaded (weights that did not load, a dtype it "
                    "was not trained in), the first batches (an empty or corrupt sample, labels all -100), "
                    f"{_numerics_hint(facts)}; fix that and start again, since no update came before the NaN."),
        title="Non-finite before any update: the model as loaded, the data or numerics",
    )


def trained_precision(facts: Facts) -> str:
    """The precision the run trained in: the profile's, else the one its config switches on, else "unknown"."""
    return facts.profile.precision if facts.profile is not None else next(
        (kind for kind in ("fp16", "bf16") if precision_sources(facts.config, kind)), "unknown")


def _numerics_hint(facts: Facts) -> str:
    """Where to look in the numerics, for the precision the run trained in: fp16's overflow (max 65504) is fixed by
    bf16; a bf16 or fp32 run cannot overflow there, so that advice would send it the wrong way."""
    precision = trained_precision(facts)
    if precision == "fp16":
        return "at precision (the run trained in fp16, which overflows past 65504: use bf16)"
    if precision in ("bf16", "fp32"):
        why = "whose range is fp32's" if precision == "bf16" else "not in half precision"
        return (f"at the numerics (the run trained in {precision}, {why}: not an fp16 overflow; look for a log or "
                "division of 0, an attention row masked entirely)")
    return "at precision (the precision is unknown: if it trained in fp16, an overflow past 65504: use bf16)"


def _trouble_sentences(facts: Facts) -> list[str]:
    out = []
    bad = facts.nonfinite_steps("grad_norm")
    if bad:
        out.append(f"grad_norm first non-finite at step {bad[0]}")
    spikes = facts.of_kind("grad_norm_spike")
    if spikes:
        out.append(f"grad_norm spiked at step {spikes[0].step}")
    first = first_bad_checkpoint(facts)
    if first is not None:
        out.append(f"first checkpoint with non-finite weights: {first.name}")
    return out


def no_warmup(facts: Facts) -> Cause | None:
    """The learning rate was at its peak from the first logged step (or the config sets no warm-up)."""
    if not facts.unstable_beyond_skips or facts.before_any_update or _warmup_configured(facts) \
            or (_after_the_warm_up_window(facts) and lr_precursor(facts) is None):
        return None
    lr = lr_points(facts.timeline)
    evidence = []
    if len(lr) >= 2 and _log_starts_at_the_start(facts, lr) and _first_point_inside_a_warm_up(facts, lr):
        first_step, first = int(lr.index[0]), float(lr.iloc[0])
        if first < facts.thresholds.warmup_peak_fraction * float(lr.max()) or _started_from_zero(facts, first_step):
            return None
        evidence.append(f"learning_rate was already {evidence_value(first)} at the first logged step {first_step} "
                        f"(peak {evidence_value(lr.max())}): no warm-up")
    settings = [said(facts.config, k) for k in ("warmup_steps", "warmup_ratio") if facts.config.get(k) is not None]
    if not evidence and not settings:
        return None
    evidence += settings
    return Cause(
        cause="no_warmup", confidence="possible", evidence=evidence,
        suggestion=f"W{warm_up_advice(facts)[1:]}.",  # 'Warm up over the first 3-10% of steps (how).'
        title="No learning-rate warm-up",
    )


WARM_UP_WINDOW = 0.1  # the most of a run's steps a warm-up covers (recipes: the first 3-10%)
_SHORTEST_WARM_UP = 0.03  # ... and the least


def _first_point_inside_a_warm_up(facts: Facts, lr) -> bool:
    """Whether the first logged rate comes early enough to show a warm-up: within the shortest a recipe uses
    (`_SHORTEST_WARM_UP` of the planned steps) where the run's length is known, else at the first logging interval.
    A rate at its peak at step 400 of a 2,000-step run says nothing of a 60-step warm-up before it."""
    first_step = int(lr.index[0])
    total = planned_steps(facts) or _schedule_ran_out(facts)
    if total:
        return first_step <= max(1.0, _SHORTEST_WARM_UP * total)
    interval = float(np.median(np.diff(lr.index.to_numpy()))) if len(lr) >= 2 else 1.0
    return first_step <= max(interval, 1.0)


def _after_the_warm_up_window(facts: Facts) -> bool:
    """The trouble came, by a whole logging interval, after the longest warm-up a recipe uses had ended
    (`WARM_UP_WINDOW` of the run's planned steps): a warm-up would not have changed the rate in force there, nor,
    where nothing built up before it (no `lr_precursor`: the caller's part), anything that led to it. Only where the
    planned length is known (a log cut at the break does not say how long the run was to be)."""
    first = facts.first_unstable
    total = planned_steps(facts) or _schedule_ran_out(facts)
    if first is None or total is None:
        return False
    loss = facts.series("loss")
    steps = loss.index[loss.index <= first.step]
    interval = int(steps[-1] - steps[-2]) if len(steps) >= 2 else first.step
    return first.step - interval > WARM_UP_WINDOW * total


def planned_steps(facts: Facts) -> int | None:
    """How many optimizer steps the run was set up for: a configured max_steps (or the one a trainer_state.json
    records), or num_train_epochs at the steps an epoch took in the log; None where none says it."""
    c = facts.config
    recorded = [m.get("max_steps") for m in facts.timeline.meta.values()]
    for total in [c.get("max_steps")] + recorded:
        if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
            return int(total)
    epochs, epoch = c.get("num_train_epochs"), facts.series("epoch").dropna()
    if isinstance(epochs, (int, float)) and not isinstance(epochs, bool) and epochs > 0 and len(epoch) \
            and float(epoch.iloc[-1]) > 0 and int(epoch.index[-1]) > 0:
        return int(round(int(epoch.index[-1]) * float(epochs) / float(epoch.iloc[-1])))
    return None


_START_INTERVALS = 2  # a log's first point within this many of its own logging intervals of step 0 shows the start


def _log_starts_at_the_start(facts: Facts, lr) -> bool:
    """Whether the logged rate begins where the run did: a log whose first point comes hundreds of logging intervals
    past step 0 was resumed or cut (an Unsloth console captured from step 1503 of 4000, every 2 steps), and a warm-up
    before it would not show; so was an excerpt whose epoch column is already well past 0 where its steps say the
    run had just begun (console lines pasted from mid-run, their steps renumbered from 1)."""
    steps = lr.index.to_numpy()
    interval = float(np.median(np.diff(steps))) if len(steps) >= 2 else 1.0
    return steps[0] <= _START_INTERVALS * max(interval, 1.0) and not _epoch_past_the_start(facts, int(steps[0]))


def _epoch_past_the_start(facts: Facts, first_step: int) -> bool:
    """The logged epoch at `first_step` is well past what a log starting at step 0 would show there
    (`restarts.epoch_past_the_start`), going by the epochs per step its own later points advance: the steps were
    renumbered from a later start."""
    epoch = facts.series("epoch").dropna()
    epoch = epoch[epoch.index >= first_step]
    if len(epoch) < 2 or int(epoch.index[-1]) <= 0:
        return False
    per_step = float(epoch.iloc[-1]) / int(epoch.index[-1])
    expected = per_step * max(first_step, 1)
    return epoch_past_the_start(float(epoch.iloc[0]), expected)


_RAN_OUT = 0.05  # a logged rate down to this fraction of its peak at the last point: the schedule reached its end


def _schedule_ran_out(facts: Facts) -> int | None:
    """The run's length where no config says it: the last logged step, when the logged rate decayed there to
    `_RAN_OUT` of its peak (the schedule ran its course, so the log shows the whole run) and the log goes on past
    the trouble; None otherwise (a log cut at the break does not say how long the run was to be)."""
    lr, first = lr_points(facts.timeline), facts.first_unstable
    if len(lr) < 3 or first is None or int(lr.index[-1]) <= first.step:
        return None
    return int(lr.index[-1]) if float(lr.iloc[-1]) <= _RAN_OUT * float(lr.max()) else None


def _warm_up_in_question(facts: Facts) -> bool:
    """Whether a warm-up could have changed the rate at the trouble, so asking for one fits: the log shows the run's
    first steps (a paste from mid-run or a resumed log cannot say whether the run warmed up) and the trouble came
    within or just after the longest warm-up recipes use."""
    if _after_the_warm_up_window(facts):
        return False
    lr = lr_points(facts.timeline)
    shown = lr if len(lr) >= 2 else facts.series("loss").dropna()
    return len(shown) == 0 or _log_starts_at_the_start(facts, shown)


def _started_from_zero(facts: Facts, first_positive: int) -> bool:
    """A learning rate logged as 0 before its first positive value (baby-llama2's `lr:0.0000000` at step 0, then
    1e-4 at step 1000): the schedule rose from 0 in steps the log does not show, a warm-up it cannot rule out."""
    raw = facts.timeline.series("learning_rate")
    return bool(((raw.index < first_positive) & (raw.to_numpy(dtype="float64") == 0.0)).any())


def _warmup_configured(facts: Facts) -> bool:
    return _warmup_key(facts) is not None


_WARMUP_KEYS = ("warmup_steps", "warmup_ratio", "ds.scheduler.params.warmup_num_steps")


def _warmup_key(facts: Facts) -> str | None:
    """The first config key that sets a warm-up (a positive number), or None."""
    return next((key for key in _WARMUP_KEYS if isinstance(v := facts.config.get(key), (int, float))
                 and not isinstance(v, bool) and v > 0), None)


def _clipping(facts: Facts) -> tuple[object, str] | None:
    """The clipping norm in force: DeepSpeed's gradient_clipping when DeepSpeed ran, else max_grad_norm."""
    c = facts.config
    if any(k.startswith("ds.") for k in c.values) and "ds.gradient_clipping" in c.values:
        return c.get("ds.gradient_clipping"), said(c, "ds.gradient_clipping")
    if "max_grad_norm" in c.values:
        return c.get("max_grad_norm"), said(c, "max_grad_norm")
    return None


def no_clipping(facts: Facts) -> Cause | None:
    """Gradient clipping was off (max_grad_norm 0/None) in a run whose gradients grew or went non-finite."""
    clip = _clipping(facts)
    if not facts.unstable_beyond_skips or facts.before_any_update or clip is None or (clip[0] not in (None, 0, 0.0)):
        return None
    evidence = [f"{clip[1]}: gradients were never clipped"]
    top = max_finite(facts.series("grad_norm"))
    if top:
        evidence.append(f"largest finite grad_norm {evidence_value(top[0])} at step {top[1]}")
    return Cause(
        cause="no_clipping", confidence="possible", evidence=evidence,
        suggestion=f"Clip gradients: {clip_setting(facts, '1.0')} (DeepSpeed: gradient_clipping 1.0 or \"auto\").",
        title="Gradient clipping off",
    )


def clipping_cannot_help(facts: Facts) -> Cause | None:
    """Clipping was on, yet grad_norm went NaN/Inf: a non-finite gradient cannot be clipped."""
    clip = _clipping(facts)
    bad = facts.nonfinite_steps("grad_norm")
    if clip is None or clip[0] in (None, 0, 0.0) or not bad:
        return None
    return Cause(
        cause="clipping_cannot_help", confidence="possible",
        evidence=[f"{clip[1]} was set",
                  f"grad_norm was non-finite at {plural(len(bad), 'logged step')} from step {bad[0]}",
                  "clipping scales gradients by max_norm / total_norm, which is NaN when the norm is, so the NaN "
                  "came from the forward or backward pass itself"],
        suggestion=(f"Look for the source of the NaN: at the batches around step {bad[0]} (an empty or corrupt sample, "
                    f"labels all -100), {_numerics_hint(facts)}{_quantization_hint(facts)}; clipping alone will not "
                    "stop it."),
        title="Clipping could not stop non-finite gradients",
    )


def _quantization_hint(facts: Facts) -> str:
    """Quantization as a place to look, only where the run may have trained on a quantized base: QLoRA, a 4- or 8-bit
    load in its config, or a method not known. A full fine-tune or a LoRA that loads no quantized base is not told to
    look at quantization it did not use (yoshi182023's fp32 LoRA, 3jp4rk's fp32 full pre-training)."""
    method = profile_of(facts)[0]
    loaded = [k for k in ("quant.load_in_4bit", "quant.load_in_8bit") if facts.config.get(k) is True]
    if method == "qlora" or loaded:
        return f", and at the quantized base ({said(facts.config, loaded[0]) if loaded else 'QLoRA'})"
    # pre-training starts from random weights: there is no quantized base to look at
    unknown = method == "unknown" and profile_of(facts)[1] != "pretrain"
    return ", and at quantization, if the base was loaded in 4 or 8 bits" if unknown else ""
