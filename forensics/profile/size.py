"""The profile's model_params: the model's size from the files, a banner's count, the config's estimate, the log's
own line or a size in the run's names."""
from __future__ import annotations

import re

from ..config import RunConfig
from ..timeline import Timeline
from .names import _names_a_model_first

# `stablelm-2-1_6b`, `stablelm-zephyr-3b`: an underscore between digits before the unit is a decimal point (1.6B)
# (not `Llama_3_1_8b` nor `gemma3_1B`, where underscores stand for every separator: 3.1 8B, Gemma 3 1B)
# (nor a family's version before it: `llama-3_8b`, `Llama-2_7b-hf`, `gemma-2_2b` are Llama 3 8B, Llama 2 7B, Gemma 2 2B)
_DECIMAL_UNDERSCORE = re.compile(r"(?<![^-/\s])(?:(?P<family>[a-z]+)-)?(?P<whole>\d)_(?P<part>\d[bm])(?![a-z0-9])",
                                 re.IGNORECASE)
_VERSIONED_FAMILIES = {"llama", "gemma", "mistral", "falcon", "olmo", "phi", "glm", "yi", "mpt"}


def _decimal_sizes(text: str) -> str:
    """`1_6b` as `1.6b` where the underscore is a decimal point (module note at _DECIMAL_UNDERSCORE)."""
    def point(m: re.Match) -> str:
        family = m.group("family")
        if family and family.lower() in _VERSIONED_FAMILIES:
            return m.group(0)
        return f"{family + '-' if family else ''}{m.group('whole')}.{m.group('part')}"
    return _DECIMAL_UNDERSCORE.sub(point, text)
_SIZE = re.compile(r"(?<![a-z0-9.])(\d{1,4}(?:\.\d{1,2})?)\s?([bm])(?![a-z0-9])", re.IGNORECASE)


_UNSLOTH_SLASH = re.compile(r"Trainable parameters\s*=\s*[\d,]+\s*/\s*[\d,]+")


def _model_params(config: RunConfig, timeline: Timeline, names, evidence: dict,
                  packed_4bit: bool = False) -> int | None:
    """The model's size, from the files, a banner's count, the config's estimate, the log's own line or the name.
    packed_4bit: the base is loaded in 4 bits, so Unsloth's early-2025 `X/Y` total counts packed weights."""
    evidence.pop("model_params", None)
    n = config.get("n_params")
    estimated = str(config.source_of("n_params") or "").startswith("estimate")
    if isinstance(n, (int, float)) and n > 0 and not estimated:  # a count the files hold
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    for banner in timeline.banners:  # a count the run printed beats an estimate from the config
        packed = packed_4bit and banner.kind == "unsloth" and _UNSLOTH_SLASH.search(banner.text)
        if banner.all_params and not packed:
            evidence["model_params"] = f"{banner.kind} banner in {banner.source}"
            return int(banner.all_params)
    if isinstance(n, (int, float)) and n > 0:
        counted = _counted_whole(config, timeline, n)
        if counted is not None:  # the Trainer counted every weight: an exact count beats the estimate
            evidence["model_params"] = (f"{counted.kind} banner in {counted.source}: {counted.trainable_params:,} "
                                        f"trainable, the whole of the model ({config.source_of('n_params')}: "
                                        f"{int(n):,})")
            return int(counted.trainable_params)
        evidence["model_params"] = str(config.source_of("n_params"))
        return int(n)
    for source, meta in timeline.meta.items():  # a script's own `N params` line: under a banner's or config's count
        said = meta.get("console_params_said")
        if isinstance(said, int) and said > 0:
            evidence["model_params"] = f"{source}: {meta.get('console_params_said_line', '')}"
            return said
    for text, where in sorted(names, key=_names_a_model_first):
        m = _SIZE.search(_decimal_sizes(text).replace("_", "-"))
        if m:
            size = float(m.group(1)) * (1e9 if m.group(2).lower() == "b" else 1e6)
            if 1e7 <= size <= 2e12:
                evidence["model_params"] = f"'{m.group(0)}' in {where}: {text}"
                return int(size)
    return None


def _counted_whole(config: RunConfig, timeline: Timeline, n: float):
    """The trainable-count-only banner (the Trainer's, Unsloth's) whose count is the whole model's estimated size
    (within `_ESTIMATE_SHARE`), or None."""
    return next((b for b in timeline.banners if b.trainable_params and not b.all_params
                 and abs(b.trainable_params - n) <= _ESTIMATE_SHARE * n), None)


_ESTIMATE_SHARE = 0.05  # a size estimated from the config is within a few percent (norms and biases left out)
