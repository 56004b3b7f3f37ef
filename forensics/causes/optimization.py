"""Cause rules about the learning rate and gradient clipping: a rate too high for the run (`lr_too_high`) and the
advice other causes give about the rate (`rate_for_the_run`), a sudden break with no precursor (`sudden_break`: data
or numerics), and clipping that was off or could not help.

Each rule is `rule(facts) -> Cause | None`; thresholds come from `Thresholds`. The precursors these rules read are in
`precursors`, the warm-up in `warmup`, the run and its range in words in `lr_words`.
"""
from __future__ import annotations

import numpy as np

from ..findings import Cause, plural
from ..ingest.tracker_config import FROZEN_LANGUAGE_MODEL
from .architecture import own_setting_name
from ..analyzers.metrics import format_rate
from .evidence import (Facts, first_bad_checkpoint, evidence_value, max_finite, peak_lr, precision_sources,
                       resume_advice, said)
from .lr_ranges import OBJECTIVES_WITH_ROWS, LrRange, lr_range
from .lr_words import (against, family_of, for_objective, method_sentences, profile_of, ranges_in_words, run_name,
                       run_ranges, scope_of)
from .precursors import (falling_rate_rise, lr_precursor, nan_gradient_at_the_break, no_precursor,
                         rate_rose_without_end)
from .setting_names import clip_setting, warm_up_advice
from .warmup import warm_up_in_question, warm_up_seen

FAR_OUT = 5.0  # a peak rate this many times the range's ceiling is evidence by itself
# ... and this many times pre-training's ceiling (the smallest models' where the size is unknown) is out of every
# recipe, large-batch ones included (BERT-large's LAMB recipe runs at 6e-3)
_BEYOND_PRETRAINING = 10.0


def lr_too_high(facts: Facts) -> Cause | None:
    """Peak LR above the ceiling of the range recipes use for this run's method, objective and size.

    An unknown method is said to be unknown: the run is judged against both ranges (too high only
    past the full fine-tuning ceiling, and sure only past the adapter one) and both are given; an
    unknown objective or size is said too (`range_scope`).
    "likely" only when the run's own metrics show a precursor (the learning rate jumped, the loss
    rose, grad_norm climbed before the break); a sudden break leaves it "possible", however far
    the rate is out of range (a recipe's rate for another optimizer or objective is out of range too).
    """
    if not facts.unstable_beyond_skips or facts.before_any_update or facts.opens_broken:
        return None
    peak, where = peak_lr(facts)
    if peak is None:
        return None
    method, objective, n_params = profile_of(facts)
    ranges = run_ranges(facts)
    if peak <= ranges[0].ceiling:
        return None
    sure = method != "unknown" or peak > ranges[-1].ceiling
    evidence = list(where) + method_sentences(facts, method, ranges)
    precursor = lr_precursor(facts)
    evidence.append(precursor or no_precursor(facts))
    evidence += _trouble_sentences(facts)
    if _rate_of_another_kind(facts):
        return None  # SGD, Prodigy, D-Adaptation: the recipes' Adam-family rates do not judge theirs
    if method == "unknown" and _language_model_frozen(facts):
        return None  # a projector stage (LLaVA's): neither full fine-tuning's nor an adapter's rates judge it
    sgd = _sgd_scale(facts, peak)
    # so far out of every recipe that the rate alone is evidence
    far = peak >= FAR_OUT * ranges[-1].ceiling and sgd is None
    if sgd is not None:
        evidence.append(sgd)
    if far and precursor is None:
        # with the objective unknown, pre-training (and LAMB-style large-batch) recipes are not ruled out
        evidence.append(f"peak {format_rate(peak)} is {peak / ranges[-1].ceiling:.0f}x the top of the range: "
                        + ("too far out for any recipe" if objective in OBJECTIVES_WITH_ROWS
                           or peak >= _BEYOND_PRETRAINING * lr_range("full", "pretrain", n_params or 1).ceiling else
                           "far above every fine-tuning recipe (pre-training recipes, which the unknown objective "
                           "leaves open, run higher)"))
    likely = facts.broken and sure and precursor is not None  # a rate far out of range without one stays possible
    title = (f"Learning rate {format_rate(peak)} too high for {run_name(method, objective, n_params)}" if sure
             else f"Learning rate {format_rate(peak)}: too high if this was full fine-tuning (method unknown)")
    advice = _lr_advice(facts, method, ranges, peak)
    rise = None if precursor else falling_rate_rise(facts)
    if rise is not None:  # its own evidence says the rise is no sign of the rate: it does not lead with lowering it
        title = (f"Learning rate {format_rate(peak)} above the range for {run_name(method, objective, n_params)}, "
                 "though the loss rose on a falling rate") if sure else title
        advice = (f"Look first at the batches around step {rise} and what else changed there: the loss rose on a "
                  f"falling rate, long after its peak. The rate is above what recipes use all the same: "
                  f"{advice[0].lower()}{advice[1:]}")
    if sgd is not None:
        named = _named_optimizer(facts)
        title += (" with an Adam-family optimizer " + (f"(the run names {named!r})" if named else
                                                        "(the optimizer is not known)"))
        advice = (f"With Adam or AdamW: {advice[0].lower()}{advice[1:]} With plain SGD, {format_rate(peak)} is a "
                  "usual rate: look at the gradients first (clipping, an exploding recurrence) and at the data.")
    runaway = rate_rose_without_end(facts)
    if runaway is not None:  # whatever the range, a rate that keeps growing breaks the run: the schedule comes first
        evidence.append(runaway)
        advice = (f"Fix the learning-rate schedule first: {runaway} (a warm-up peaks, then the rate holds or decays). "
                  f"{advice}")
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
    return (f"{which}: a learning rate of {format_rate(peak)} is far above every Adam-family recipe but usual for "
            "plain SGD (0.1 to 20), so the rate alone is no evidence of the break")


def _lr_advice(facts: Facts, method: str, ranges: list[LrRange], peak: float) -> str:
    steadying = _steadying_advice(facts, method)
    unfitted = _no_row_fits(facts, peak)
    if unfitted is not None:
        advice = f"{unfitted[0].upper()}{unfitted[1:]}; {steadying}"
    elif method == "unknown" and peak <= ranges[-1].ceiling:
        objective = profile_of(facts)[1]
        advice = (f"The method is unknown and decides this: for {for_objective('full fine-tuning', objective)} lower "
                  f"the learning rate to {ranges[0].describe()}; for {for_objective('LoRA/QLoRA adapters', objective)} "
                  f"{format_rate(peak)} "
                  f"{against(peak, ranges[1])}, so look elsewhere first. Either way {steadying}")
    elif _past_every_row(facts, peak):
        advice = f"Lower the learning rate: {_every_recipe_below(facts, peak)}; {steadying}"
    else:
        target = ranges_in_words(method, profile_of(facts)[1], ranges, unknown="(the method is unknown)")
        scope = scope_of(facts, method)
        # (the scope is a parenthesis of its own: inside the target's it nested two deep)
        advice = f"Lower the learning rate ({target}){'; those are ' + scope if scope else ''}; {steadying}"
    resume = resume_advice(facts)  # only a checkpoint saved before the trouble, named; none for a run that got past it
    return advice + (f", and {resume}" if resume else "") + "."


def rate_for_the_run(facts: Facts) -> str:
    """The learning-rate advice for the run's method, objective and size (`lr_ranges`), as a clause: "lower" only where
    its peak is above the range (for an unknown method, given both ranges, above the full fine-tuning one).

    Where the peak is within or under the range a lower rate is no fix, and advice that asks for one sends the run
    the wrong way (a QLoRA run at 5e-5 is already under 1e-4 to 2e-4). An optimizer on another scale than Adam's
    (plain SGD, Prodigy) is not judged by the recipes' ranges at all."""
    method, objective, _ = profile_of(facts)
    if _rate_of_another_kind(facts):
        return (f"judge the learning rate by {_named_optimizer(facts)}'s own usual rates (the recipes' ranges are "
                "Adam-family rates)")
    if method == "unknown" and _language_model_frozen(facts):  # lr_too_high's own exception
        return ("judge the learning rate by the stage's own recipe: the language model is frozen, so only a small part "
                "such as the projector trains, at rates no fine-tuning range here covers")
    ranges = run_ranges(facts)
    what, peak = ranges_in_words(method, objective, ranges), peak_lr(facts)[0]
    if peak is None:
        # "not in its files" would be a claim about files the reader may not have parsed (a DeepSpeed line's lr=[...])
        return f"check the learning rate against the usual {what} (no learning rate was read from the run's files)"
    if peak < ranges[0].low:
        return f"the learning rate ({format_rate(peak)}) is below the usual {what}: a lower one is no fix"
    if peak <= ranges[0].high:
        where = "within" if method != "unknown" else "not above"
        return f"the learning rate ({format_rate(peak)}) is {where} the usual {what}: keep it there"
    if peak <= ranges[0].ceiling:  # lr_too_high's own bound (an adapter's up to three times the top): not too high
        return f"the learning rate ({format_rate(peak)}) {against(peak, ranges[0])}: not too high by itself"
    unfitted = _no_row_fits(facts, peak)
    if unfitted is not None:
        return unfitted
    own = lr_too_high(facts)
    if own is not None:  # its own cause gives the range: ccccai239's fp16 advice said it again, word for word
        return f"the learning rate ({format_rate(peak)}) is too high (see the cause \"{own.title}\")"
    if method == "unknown" and objective not in OBJECTIVES_WITH_ROWS:
        return f"lower the learning rate if it is above the usual for the run's method and objective ({what})"
    return f"lower the learning rate ({what})"


def _no_row_fits(facts: Facts, peak: float) -> str | None:
    """Where neither the method nor the objective is known and the peak is above every fine-tuning recipe's ceiling yet
    within what pre-training and large-batch recipes run at (under `_BEYOND_PRETRAINING` times pre-training's): a
    clause saying no range of the table fits, in place of a fine-tuning range the run may not be (BERT pre-training
    with LAMB at 6e-3, T5 at a constant 1e-3); None otherwise."""
    method, objective, n_params = profile_of(facts)
    if method != "unknown" or objective in OBJECTIVES_WITH_ROWS or family_of(facts) != "decoder":
        return None  # a T5's or an RNN's own rows fit it (`lr_ranges`)
    full, adapter = lr_range("full", objective, n_params), lr_range("lora", objective, n_params)
    pretraining = lr_range("full", "pretrain", n_params or 1)
    if not adapter.ceiling < peak < _BEYOND_PRETRAINING * pretraining.ceiling:
        return None
    return (f"no range in the table fits a rate of {format_rate(peak)} where the method is unknown and so is the "
            f"objective: it is above every fine-tuning recipe ({full.describe()} for full fine-tuning, "
            f"{adapter.describe()} for LoRA/QLoRA adapters) but not beyond pre-training recipes "
            f"({pretraining.describe()} under 1B parameters; large-batch optimizers such as LAMB run higher), so "
            "judge it by the recipe of the run's own model and optimizer")


def _past_every_row(facts: Facts, peak: float) -> bool:
    """Neither the method nor the objective is known and the peak is past pre-training's rates as well (from
    `_BEYOND_PRETRAINING` times its ceiling): no row is the run's, and a 7B-class fine-tuning range given as the target
    reads as if the run were one (ChristianPE1_transformer-test, a small transformer trained from its first loss of 7.6
    at 0.015 rising to 1.5, was told "1e-05 to 2e-05 for full fine-tuning ... for a 7B-class model")."""
    method, objective, n_params = profile_of(facts)
    pretraining = lr_range("full", "pretrain", n_params or 1)
    return method == "unknown" and objective not in OBJECTIVES_WITH_ROWS and family_of(facts) == "decoder" \
        and peak >= _BEYOND_PRETRAINING * pretraining.ceiling


def _every_recipe_below(facts: Facts, peak: float) -> str:
    """The span every recipe of the table sits in, fine-tuning and pre-training alike, for a peak past them all."""
    n_params = profile_of(facts)[2]
    rows = [lr_range(m, o, n_params or 1) for m in ("full", "lora") for o in ("sft", "pretrain")]
    low, high = min(r.low for r in rows), max(r.ceiling for r in rows)
    return (f"{format_rate(peak)} is above every Adam-family recipe, fine-tuning and pre-training from scratch "
            f"alike ({evidence_value(low)} to {evidence_value(high)}); the method and objective are unknown, so take "
            "the range of the run's own model and objective from there")


_USUAL_CLIP = 1.0  # the clipping norm recipes use (adapters also 0.3)


def _steadying_advice(facts: Facts, method: str) -> str:
    """Warm-up and clipping advice that does not ask the run for what it already did: a warm-up its config sets or its
    log shows is kept, and a clipping norm at or under the usual one is named as the one it ran with."""
    clip = clip_setting(facts, "0.3 to 1.0" if method in ("lora", "qlora", "peft") else "1.0")
    warmed = warm_up_seen(facts)
    parts = [f"keep the warm-up ({warmed})"] if warmed else \
        [] if rate_rose_without_end(facts) else [warm_up_advice(facts)] if warm_up_in_question(facts) else []
    clipping = _clipping(facts)
    norm = clipping[0] if clipping is not None else None
    nan_from = nan_gradient_at_the_break(facts)
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


def _clipping(facts: Facts) -> tuple[object, str] | None:
    """The clipping norm in force: DeepSpeed's gradient_clipping when DeepSpeed ran, else max_grad_norm (named as
    the run's own script names it)."""
    c = facts.config
    if any(k.startswith("ds.") for k in c.values) and "ds.gradient_clipping" in c.values:
        return c.get("ds.gradient_clipping"), said(c, "ds.gradient_clipping")
    if "max_grad_norm" in c.values:
        own = own_setting_name(facts, "max_grad_norm")  # ohalon's RNN script calls it `clip`
        return c.get("max_grad_norm"), said(c, "max_grad_norm", own)
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
