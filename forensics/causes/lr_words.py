"""The run and its learning-rate range in words: the method ("LoRA", "pre-training"), the run's name with its objective
and size, the (method, objective, size) the ranges are read for, and the sentences that give a range.

Shared by the learning-rate causes (`optimization.lr_too_high`, `too_slow.lr_too_low`) and the advice other causes
give about the rate (`optimization.rate_for_the_run`).
"""
from __future__ import annotations

import numpy as np

from ..analyzers.metrics import a_or_an, params_in_words
from ..profile.model_start import pretrained_base
from .architecture import architecture_of
from .evidence import Facts, evidence_value
from .lr_ranges import OBJECTIVES_WITH_ROWS, OWN_OBJECTIVES, LrRange, lr_range, range_scope

_NAMES = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA", "peft": "PEFT adapters"}
_FAMILY_NAMES = {"t5": "a T5-family encoder-decoder", "recurrent": "a recurrent network"}


def method_name(method: str, objective: str) -> str:
    """The method in words; a whole model trained from random weights is pre-training, not fine-tuning."""
    return "pre-training" if method == "full" and objective == "pretrain" else _NAMES.get(method, method)


def profile_of(facts: Facts) -> tuple[str, str, int | None]:
    """(method, objective, model size) the learning-rate ranges are read for. A pre-training objective on a trained
    model (`continued_from`) is read as fine-tuning: its rates are a trained model's, not random weights' (`lr_ranges`:
    the "sft" rows cover continued pre-training); one from random weights, of a method not known, as full training."""
    p = facts.profile
    method = p.method if p is not None else (facts.config.get("method") or "unknown")
    n = p.model_params if p is not None else facts.config.get("n_params")
    objective = p.objective if p is not None else "unknown"
    if objective == "unknown" and p is not None and p.from_random_weights:
        # a README's "trained from scratch" says the weights started random, not what they learn: pre-training's
        # rates, not fine-tuning's (ruapotato_NullRoot's 3e-4 was "too high for full fine-tuning")
        objective = "pretrain"
    if objective == "pretrain" and continued_from(facts) is not None:
        objective = "sft"
    if objective == "pretrain" and method == "unknown":
        method = "full"  # random weights are trained whole: no adapter range is the run's (`FROM_RANDOM_WEIGHTS`)
    return method, objective, n if isinstance(n, (int, float)) else None


def family_of(facts: Facts) -> str:
    """The family of rows the run's rates are read from: "t5", "recurrent" (`architecture_of`) or "decoder"."""
    found = architecture_of(facts)
    return found.kind if found is not None else "decoder"


def run_ranges(facts: Facts) -> list[LrRange]:
    """The rows the run's peak is judged against: its method's, or full fine-tuning's then an adapter's where the
    method is unknown, for its objective, size and family of network (`family_of`)."""
    method, objective, n_params = profile_of(facts)
    family = family_of(facts)
    methods = ("full", "lora") if method == "unknown" else (method,)
    return [lr_range(m, objective, n_params, family) for m in methods]


def scope_of(facts: Facts, method: str) -> str:
    """`range_scope` for the run: what its ranges stand in for where it does not say, for its family of network."""
    _, objective, n_params = profile_of(facts)
    return range_scope(objective, n_params, method, family_of(facts))


# Where the method is read from a pre-training objective: liguodongiot_llm-action's Megatron pre-training of a LLaMA
# from ln(32000) was told its rate "is not above the usual 0.00012 to 0.0003 for pre-training, 0.0001 to 0.0002 for
# LoRA/QLoRA adapters; the method is unknown", an adapter's range for a run that has no trained model to adapt
FROM_RANDOM_WEIGHTS = "pre-training from random weights trains every weight: no adapter"


def continued_from(facts: Facts) -> str | None:
    """Where a run profiled as pre-training says it starts from a trained model (`pretrained_base`: a named base whose
    first loss is not at the random guess), as evidence; None otherwise. yangjunx21's continued pre-training of
    chatglm3-6b-base (first loss 2.1, ln(vocabulary) 11.1) was told to raise its 3e-6 to from-scratch rates (1.2e-4 to
    3e-4), which wreck a trained 6B model."""
    p = facts.profile
    # a README's "trained from scratch" is read as pre-training too (`profile_of`): a trained base still wins over it
    if p is None or not (p.objective == "pretrain" or (p.objective == "unknown" and p.from_random_weights)):
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
    return for_objective(what, objective) + (f" of {a_or_an(params_in_words(n_params))} model" if n_params else "")


def for_objective(what: str, objective: str) -> str:
    """A method in words with the objective its range is for, where that is not supervised fine-tuning's: a DPO or
    GRPO rate is a tenth to a hundredth of an SFT one, so "5e-06 to 5e-05 for LoRA" alone reads as LoRA's range and
    contradicts the 1e-4 to 2e-4 an SFT LoRA runs at (prchigoyal01's LoRA DPO, srinath-manda's full GRPO); a
    classifier's range is not a language model's either ("full fine-tuning (classification)")."""
    return f"{what} ({objective})" if objective in OWN_OBJECTIVES else what


def no_adapters(ranges: list[LrRange]) -> bool:
    """The rows used are a recurrent network's: it has no LoRA adapters, so its range is the network's, not full
    fine-tuning's and an adapter's (ohalon's RNN_RELU was told "for full fine-tuning and adapters ... alike")."""
    return ranges[0].family == "recurrent"


def method_sentences(facts: Facts, method: str, ranges: list[LrRange]) -> list[str]:
    objective = profile_of(facts)[1]
    scope = scope_of(facts, method)
    scoped = [f"those ranges are {scope}"] if scope else []
    family = ranges[0].family  # the rows used: a T5's preference or RL objective is read from the decoder rows
    found = architecture_of(facts) if family in _FAMILY_NAMES else None
    if found is not None:  # a T5's or an RNN's rates are not a decoder LM's (Anujaykalbhor's T5, ohalon's RNN_RELU)
        scoped.insert(0, f"the network is {_FAMILY_NAMES[family]} ({found.said}): its rows are "
                         f"{_FAMILY_NAMES[family]}'s, not a decoder-only language model's")
    if method == "unknown" and no_adapters(ranges):
        return [f"method unknown ({_method_unread(facts)}): recipes use {ranges[0].describe()} for "
                f"{_FAMILY_NAMES[family]} ({ranges[0].source})"] + scoped
    if method == "unknown":
        return [f"fine-tuning method unknown ({_method_unread(facts)}): recipes "
                f"use {ranges[0].describe()} for {for_objective('full fine-tuning', objective)} ({ranges[0].source}) "
                f"and {ranges[1].describe()} for {for_objective('LoRA/QLoRA', objective)} ({ranges[1].source})"] \
            + scoped
    where = (facts.profile.evidence.get("method") if facts.profile else None) or facts.config.source_of("method") \
        or FROM_RANDOM_WEIGHTS
    continued = continued_from(facts)
    return [f"method: {method_name(method, objective)} ({where})"] + ([continued] if continued else []) + \
        [f"recipes for {_it(method, objective)} use {ranges[0].describe()} ({ranges[0].source})"] + scoped


def _it(method: str, objective: str) -> str:
    """The method the recipes are for, as the evidence names it after "method: ...": "it", or the method with its
    objective where that is a preference or RL one (`for_objective`): "recipes for it use 5e-06 to 5e-05" read as
    LoRA's range beside prchigoyal01's "method: LoRA", a tenth of what an SFT LoRA runs at."""
    return for_objective(method_name(method, objective), objective) if objective in OWN_OBJECTIVES else "it"


def _method_unread(facts: Facts) -> str:
    """Why the method is unknown: nothing says it, or a banner's trainable count that cannot tell it alone (no model
    size beside it: the whole of a small model or an adapter on a large one)."""
    counted = next((b for b in facts.timeline.banners if b.trainable_params and not b.all_params), None)
    if counted is None:
        return "no adapter files, framework config, banner or name says it"
    return (f"the log's banner counts {counted.trainable_params:,} trainable parameters but not the model's size, so "
            "whether that is the whole model or an adapter on a larger one is not known")


def ranges_in_words(method: str, objective: str, ranges: list[LrRange], unknown: str | None = None) -> str:
    """The range for the run's method and objective, or both (full, then adapter) where the method is unknown, followed
    by `unknown` (or, by default, "; the method is unknown"); rows of a family other than the decoder LMs' name it
    (one range where full fine-tuning's and an adapter's are the same)."""
    of_family = f" of {_FAMILY_NAMES[ranges[0].family]}" if ranges[0].family in _FAMILY_NAMES else ""
    if method == "unknown":
        if unknown is None:
            unknown = "; the method is unknown" if objective in OBJECTIVES_WITH_ROWS else \
                "; the method and objective are unknown"
        unknown = unknown if unknown.startswith(";") else " " + unknown
        if no_adapters(ranges):
            return f"{ranges[0].describe()} for {_FAMILY_NAMES[ranges[0].family]}{unknown}"
        if ranges[0].describe() == ranges[1].describe():  # a T5's rows: the method does not decide it
            return f"{ranges[0].describe()} for full fine-tuning and adapters{of_family} alike{unknown}"
        return (f"{ranges[0].describe()} for {for_objective(method_name('full', objective), objective)}{of_family}, "
                f"{ranges[1].describe()} for {for_objective('LoRA/QLoRA adapters', objective)}{unknown}")
    return f"{ranges[0].describe()} for {run_name(method, objective, None)}{of_family}"


def against(peak: float, rng: LrRange) -> str:
    """Where `peak` sits against an adapter range it does not exceed the ceiling of, in words."""
    if peak < rng.low:
        return f"is below the usual {rng.describe()}"
    if peak <= rng.high:
        return f"is within the usual {rng.describe()}"
    return (f"is above the usual {rng.describe()} but within what adapter runs often use "
            f"(up to {evidence_value(rng.ceiling)})")
