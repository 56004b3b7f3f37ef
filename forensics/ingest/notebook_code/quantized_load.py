"""Whether the loader of a model a notebook loads was handed a 4-bit quantization, so that a 4-bit config handed to
another model's loader (a first run's, a reload to try the adapter) is not read as the trained model's
(Alvarofp537_MG-LoRA-RAG: Qwen loaded in 4 bits and trained, then granite loaded whole and trained; the log read is
granite's)."""
from __future__ import annotations

import ast

from .adapter_wraps import loads_an_adapter
from .syntax import called_name, owner_name, literal_value

FOUR_BIT_LOAD = "_load.four_bit"  # (the key a load's record carries; never a run-configuration value)
_QUANTIZATION_KEYWORDS = ("quantization_config", "load_in_4bit", "load_in_8bit")
_BNB_CONFIG = "BitsAndBytesConfig"


def four_bit_config_names(trees: list, names: dict) -> set[str]:
    """The names bound to a `BitsAndBytesConfig(load_in_4bit=True, ...)` in the cells that ran."""
    out = set()
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Assign) and _four_bit_config(node.value, names):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def loaded_in_four_bits(call: ast.Call, config_names: set[str], names: dict) -> bool | None:
    """True where a loader is asked for 4 bits (`load_in_4bit=True`, or a 4-bit BitsAndBytesConfig as its
    quantization_config, by name or written in place); False where a transformers loader is given no quantization
    keyword and no `**kwargs`; else None (Unsloth's loaders load in 4 bits unless told not to; an adapter's loader; a
    config it cannot resolve)."""
    keywords = {k.arg: k.value for k in call.keywords}
    if "load_in_4bit" in keywords and literal_value(keywords["load_in_4bit"], names) is True:
        return True
    config = keywords.get("quantization_config")
    if config is not None and (_four_bit_config(config, names)
                               or isinstance(config, ast.Name) and config.id in config_names):
        return True
    if None in keywords or any(k in keywords for k in _QUANTIZATION_KEYWORDS):
        return None
    # (an adapter's loader, `PeftModel.from_pretrained(base, ...)`, puts it on a base loaded before: the base's says)
    return None if owner_name(call.func).startswith("Fast") or loads_an_adapter(call) else False


def _four_bit_config(node: ast.expr, names: dict) -> bool:
    return isinstance(node, ast.Call) and called_name(node.func) == _BNB_CONFIG and any(
        k.arg == "load_in_4bit" and literal_value(k.value, names) is True for k in node.keywords)
