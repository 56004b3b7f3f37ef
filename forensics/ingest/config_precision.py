"""The training precision a run's own YAML configuration names by key where no framework's reader took the file
(`config_files.read_config_yaml`): `precision: bf16` (Jinyeop3110's hardware section), Accelerate's
`mixed_precision: bf16` (BenasdTW's launch configs), TrainingArguments' flags `bf16: true` / `fp16: true` in a
script's own config (readytensor's config.yaml, satyamshivam13's configs/train.yaml, MABELGAO's train section).

Only a value that names a precision counts: `mixed_precision: no` leaves the weights' own dtype open (a bfloat16 model
trains in bf16 without it), `bf16: false` alone says nothing of fp16, and a model's `dtype` is not the training's (a
frozen encoder loaded in bfloat16), nor a key in another case (`PRECISION: fp16`: an environment variable) or under
another stage's section (`eval:`, `export:`, `inference:`, `serve:`, `quantization:`, `env:`). A file whose keys
name two precisions says none, nor one that names a precision and sets its flag false (`bf16: false` beside
`precision: bf16`): the run's own flag is the one TrainingArguments reads. The flags a file sets false are kept
(`flags_off`) so that no weaker reading gives them either.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

_NAMED = {"bf16": "bf16", "bfloat16": "bf16", "bf16-mixed": "bf16", "fp16": "fp16", "float16": "fp16",
          "16-mixed": "fp16", "fp32": "fp32", "float32": "fp32", "32-true": "fp32"}
_PRECISION_KEYS = ("precision", "mixed_precision")
_FLAGS = ("bf16", "fp16")
# sections whose settings are not the training's: evaluation, export, inference, serving, quantization, environment
# variables (a docker-compose service's `environment: PRECISION: fp16`, a CI job's `env:`)
_OTHER_STAGE = re.compile(r"(?i)^(?:eval\w*|export\w*|infer\w*|serv\w*|quant\w*|env\w*)$")


def training_pairs(sectioned: Iterable[tuple[tuple[str, ...], str, Any]]) -> list[tuple[str, Any]]:
    """The `key: value` pairs of a configuration's (sections, key, value) that are not under another stage's section
    (`_OTHER_STAGE`)."""
    return [(key, value) for sections, key, value in sectioned if not any(map(_OTHER_STAGE.match, sections))]


def precision_keyed(pairs: Iterable[tuple[str, Any]]) -> tuple[str, str] | None:
    """("bf16" | "fp16" | "fp32", the keys that say it) from a configuration's `key: value` pairs, where they name
    one precision; else None."""
    pairs = list(pairs)
    said: dict[str, list[str]] = {}
    for key, value in pairs:
        named = _named(key, value)  # case as written: `PRECISION: fp16` is an environment variable, not a setting
        if named:
            said.setdefault(named, []).append(f"{key}: {value if isinstance(value, str) else 'true'}")
    if len(said) != 1:
        return None
    precision, words = said.popitem()
    return None if precision in flags_off(pairs) else (precision, ", ".join(words))


def flags_off(pairs: Iterable[tuple[str, Any]]) -> tuple[str, ...]:
    """The mixed-precision flags (`bf16`, `fp16`) a configuration's pairs set false."""
    return tuple(flag for flag in _FLAGS if any(key == flag and value is False for key, value in pairs))


def _named(key: str, value: Any) -> str | None:
    if key in _PRECISION_KEYS and isinstance(value, str):
        return _NAMED.get(value.strip().lower())
    return key if key in _FLAGS and value is True else None
