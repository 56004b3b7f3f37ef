"""The profile's model_params: the model's size from the files, a banner's count, the config's estimate, the log's
own line or a size in the run's names."""
from __future__ import annotations

import re

from ..config import RunConfig
from ..timeline import Timeline
from .names import names_a_model_first

# `stablelm-2-1_6b`, `stablelm-zephyr-3b`: an underscore between digits before the unit is a decimal point (1.6B)
# (not `Llama_3_1_8b` nor `gemma3_1B`, where underscores stand for every separator: 3.1 8B, Gemma 3 1B)
# (nor a family's version before it: `llama-3_8b`, `Llama-2_7b-hf`, `gemma-2_2b` are Llama 3 8B, Llama 2 7B, Gemma 2 2B)
_DECIMAL_UNDERSCORE = re.compile(r"(?<![^-/\s])(?:(?P<family>[a-z]+)-)?(?P<whole>\d)_(?P<part>\d[bm])(?![a-z0-9])",
                                 re.IGNORECASE)
# `qwen2_5_1_5b`, `Phi_1_5b`, `qwen2_5_0_5b`: where underscores stand for every separator, `1_5b` after one is still
# 1.5B (a whole 5B model is rare; 0.5B and 1.5B are common sizes), though `3_1_8b` stays Llama 3.1 8B
_UNDERSCORED_HALF = re.compile(r"(?<=_)(?P<whole>\d)_(?P<part>5[bm])(?![a-z0-9])", re.IGNORECASE)
_VERSIONED_FAMILIES = {"llama", "gemma", "mistral", "falcon", "olmo", "phi", "glm", "yi", "mpt"}


def _decimal_sizes(text: str) -> str:
    """`1_6b` as `1.6b` where the underscore is a decimal point (module note at _DECIMAL_UNDERSCORE)."""
    def point(m: re.Match) -> str:
        family = m.group("family")
        if family and family.lower() in _VERSIONED_FAMILIES:
            return m.group(0)
        return f"{family + '-' if family else ''}{m.group('whole')}.{m.group('part')}"
    text = _DECIMAL_UNDERSCORE.sub(point, text)
    return _UNDERSCORED_HALF.sub(lambda m: f"{m.group('whole')}.{m.group('part')}", text)
_SIZE = re.compile(r"(?<![a-z0-9.])(\d{1,4}(?:\.\d{1,2})?)\s?([bm])(?![a-z0-9])", re.IGNORECASE)


_UNSLOTH_SLASH = re.compile(r"Trainable parameters\s*=\s*[\d,]+\s*/\s*[\d,]+")


def _model_params(config: RunConfig, timeline: Timeline, names, evidence: dict,
                  packed_4bit: bool = False, trained_whole: bool = False) -> int | None:
    """The model's size, from the files, a banner's count, the config's estimate, the log's own line or the name.
    packed_4bit: the base is loaded in 4 bits (its method is qlora), so Unsloth's early-2025 `X/Y` total counts packed
    weights, and so may any printed count (`_packed_count`); a quantization config's load_in_4bit says the same.
    trained_whole: the run trains every weight (its method is full), so a banner's trainable count is its size."""
    evidence.pop("model_params", None)
    n = config.get("n_params")
    estimated = str(config.source_of("n_params") or "").startswith("estimate")
    if isinstance(n, (int, float)) and n > 0 and not estimated:  # a count the files hold
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    four_bit = packed_4bit or config.get("quant.load_in_4bit") is True
    for banner in timeline.banners:  # a count the run printed beats an estimate from the config
        packed = packed_4bit and banner.kind == "unsloth" and _UNSLOTH_SLASH.search(banner.text)
        if banner.all_params and not packed and not _packed_count(banner.all_params, four_bit, names):
            evidence["model_params"] = f"{banner.kind} banner in {banner.where}"
            return int(banner.all_params)
    if isinstance(n, (int, float)) and n > 0:
        counted = _counted_whole(config, timeline, n) or (_counted_above(timeline, n) if trained_whole else None)
        if counted is not None:  # the Trainer counted every weight: an exact count beats the estimate
            evidence["model_params"] = (f"{counted.kind} banner in {counted.where}: {counted.trainable_params:,} "
                                        f"trainable, the whole of the model ({config.source_of('n_params')}: "
                                        f"{int(n):,})")
            return int(counted.trainable_params)
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    counted = _trainable_count_of_the_whole(timeline, names) if trained_whole else None
    if counted is not None:
        evidence["model_params"] = (f"{counted.kind} banner in {counted.where}: {counted.trainable_params:,} "
                                    "trainable, every weight of a run that trains them all (see method)")
        return int(counted.trainable_params)
    for source, meta in timeline.meta.items():  # a script's own `N params` line: under a banner's or config's count
        said = meta.get("console_params_said")
        if isinstance(said, int) and said > 0 and not _packed_count(said, four_bit, names):
            evidence["model_params"] = f"{source}: {meta.get('console_params_said_line', '')}"
            return said
    named = _size_in_names(names)
    if named is not None:
        evidence["model_params"] = named[1]
        return named[0]
    return None


def _packed_count(count: int, four_bit: bool, names) -> bool:
    """A count printed of a 4-bit base that is about half the size the run's names give: bitsandbytes stores two
    4-bit weights a byte (a Params4bit's numel is half its weight's), so the `param.numel()` sum of a
    print_trainable_parameters copied into a notebook, or of PEFT before it doubled Params4bit, is about half the
    model (Falcon-7B as 3.6B; the embeddings count whole). PEFT's corrected count is the size: kept; so is a count
    far under half the name's size (the name is of something else, or misread)."""
    if not four_bit:
        return False
    named = _size_in_names(names)
    return named is not None and _PACKED_SHARE[0] * named[0] <= count < _PACKED_SHARE[1] * named[0]


def _size_in_names(names) -> tuple[int, str] | None:
    """(size, where) of the first size the run's names give (`Qwen2-7B`: 7e9), the model's own name first, or None."""
    for text, where in sorted(names, key=names_a_model_first):
        m = _SIZE.search(_decimal_sizes(text).replace("_", "-"))
        if m:
            size = float(m.group(1)) * (1e9 if m.group(2).lower() == "b" else 1e6)
            if 1e7 <= size <= 2e12:
                return int(size), f"'{m.group(0)}' in {where}: {text}"
    return None


def _trainable_count_of_the_whole(timeline: Timeline, names):
    """The banner with the largest trainable-only count (the Trainer's `Number of trainable parameters = N`,
    Unsloth's), for a run that trains every weight; None where there is none, or where the run's names give a size
    the count falls well short of (a model with frozen parts counts less than its whole)."""
    counts = [b for b in timeline.banners if b.trainable_params and not b.all_params]
    if not counts:
        return None
    largest = max(counts, key=lambda b: b.trainable_params)
    if largest.trainable_params < _LEAST_MODEL:
        return None  # (a head trained over a frozen body, whatever the method was read as: no language model's size)
    named = _size_in_names(names)
    if named is not None and largest.trainable_params < (1 - _NAMED_SHARE) * named[0]:
        return None
    return largest


def _counted_whole(config: RunConfig, timeline: Timeline, n: float):
    """The trainable-count-only banner (the Trainer's, Unsloth's) whose count is the whole model's estimated size
    (within `ESTIMATE_SHARE`), or None."""
    return next((b for b in timeline.banners if b.trainable_params and not b.all_params
                 and abs(b.trainable_params - n) <= ESTIMATE_SHARE * n), None)


def _counted_above(timeline: Timeline, n: float):
    """The trainable-count-only banner whose count is above the estimated size `n` by up to `_ESTIMATE_MISSES`, or
    None. In a run that trains every weight the count is the whole model: the estimate, from the config alone, misses
    what the config does not describe (a head the training script adds, biases, norms)."""
    return next((b for b in timeline.banners if b.trainable_params and not b.all_params
                 and n < b.trainable_params <= (1 + _ESTIMATE_MISSES) * n), None)


_ESTIMATE_MISSES = 0.25  # ... a head or two added to a model of its config: a fraction, never a multiple, of it
ESTIMATE_SHARE = 0.05  # a size estimated from the config is within a few percent (norms and biases left out)
_LEAST_MODEL = 100_000  # parameters: the smallest language model a trainable count is taken as the size of
_NAMED_SHARE = 0.3  # a name's size is rounded (`7B` for 6.74B, `1.5B` for 1.54B), never off by a third
# a packed count's share of the name's size: half the weights and the whole embeddings of a model the name rounds
# (Llama-2-7B's 6.74B packs to 3.5B of `7b`; Llama-3-8B to 4.5B of `8b`; a small model, more of it embeddings, to 0.65)
_PACKED_SHARE = (0.45, 1 - _NAMED_SHARE)
