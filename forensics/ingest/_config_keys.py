"""Building blocks of `RunConfig` keys that every config reader uses: dotted flattening, DeepSpeed's sections."""
from __future__ import annotations

from typing import Any


def flatten(prefix: str, value: dict) -> dict[str, Any]:
    """Nested dicts as dotted keys under `prefix`: {"fp16": {"enabled": 1}} -> {"ds.fp16.enabled": 1}."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        dotted = f"{prefix}.{key}"
        if isinstance(item, dict) and item:
            out.update(flatten(dotted, item))
        else:
            out[dotted] = item
    return out


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def deepspeed_values(config: dict) -> dict[str, Any]:
    """A DeepSpeed config as `ds.<dotted>` keys; the legacy `bfloat16` section is read as `bf16`."""
    config = dict(config)
    if "bfloat16" in config and "bf16" not in config:
        config["bf16"] = config.pop("bfloat16")
    return flatten("ds", config)
