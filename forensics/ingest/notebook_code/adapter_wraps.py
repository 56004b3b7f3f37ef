"""Whether the adapter a notebook's code configures wraps the model it trains: where every call that puts an adapter
on a model (peft's `get_peft_model`, Unsloth's, transformers' `add_adapter`) comes before the loader of the trained
model, the adapter was put on a model loaded earlier (an exercise before, its model deleted) and says nothing of the
trained one (SavinovSergey_shad_homeworks: a PromptTuningConfig on a Qwen3-4B deleted, then a Llama-3.2-3B loaded
4-bit and wrapped by the notebook's own LoRA layers)."""
from __future__ import annotations

import ast

from .syntax import called_name, owner_name

LOAD_AT = "_load.at"  # (the keys a load's record carries; never run-configuration values)
ADAPTER_LOAD = "_load.adapter"
_WRAPS = ("get_peft_model", "add_adapter")
_ADAPTER_LOADERS = ("PeftModel", "AutoPeftModel")  # `PeftModel.from_pretrained(base, adapter)`: a trained adapter


def wraps_an_adapter(call: ast.Call) -> bool:
    return called_name(call.func) in _WRAPS


def loads_an_adapter(call: ast.Call) -> bool:
    return owner_name(call.func).startswith(_ADAPTER_LOADERS)


def adapter_on_another_model(trained: dict, wraps: list) -> bool:
    """Whether the adapter calls (`wraps`: where each is) all come before the trained model's loader (`trained`: the
    load's record), which loads no adapter itself."""
    at = trained.get(LOAD_AT)
    return bool(wraps) and at is not None and not trained.get(ADAPTER_LOAD) and all(w < at for w in wraps)
