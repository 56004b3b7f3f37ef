"""The training precision a run's own YAML configuration names by key where no framework's reader took the file
(`config_files.read_config_yaml`): `precision: bf16` (Jinyeop3110's hardware section), Accelerate's
`mixed_precision: bf16` (BenasdTW's launch configs), TrainingArguments' flags `bf16: true` / `fp16: true` in a
script's own config (readytensor's config.yaml, satyamshivam13's configs/train.yaml, MABELGAO's train section).

Only a value that names a precision counts: `mixed_precision: no` leaves the weights' own dtype open (a bfloat16 model
trains in bf16 without it), `bf16: false` alone says nothing of fp16, and a model's `dtype` is not the training's (a
frozen encoder loaded in bfloat16). A file whose keys name two precisions says none.
"""
from __future__ import annotations

from typing import Any, Iterable

_NAMED = {"bf16": "bf16", "bfloat16": "bf16", "bf16-mixed": "bf16", "fp16": "fp16", "float16": "fp16",
          "16-mixed": "fp16", "fp32": "fp32", "float32": "fp32", "32-true": "fp32"}
_PRECISION_KEYS = ("precision", "mixed_precision")
_FLAGS = ("bf16", "fp16")


def precision_keyed(pairs: Iterable[tuple[str, Any]]) -> tuple[str, str] | None:
    """("bf16" | "fp16" | "fp32", the keys that say it) from a configuration's `key: value` pairs, where they name
    one precision; else None."""
    said: dict[str, list[str]] = {}
    for key, value in pairs:
        named = _named(key.lower(), value)
        if named:
            said.setdefault(named, []).append(f"{key}: {value if isinstance(value, str) else 'true'}")
    if len(said) != 1:
        return None
    precision, words = said.popitem()
    return precision, ", ".join(words)


def _named(key: str, value: Any) -> str | None:
    if key in _PRECISION_KEYS and isinstance(value, str):
        return _NAMED.get(value.strip().lower())
    return key if key in _FLAGS and value is True else None
