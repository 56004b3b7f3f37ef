"""The arguments RWKV-LM's trainer (and its forks: RWKV-PEFT, RWKV-LM-LoRA) writes into train_log.txt at each launch.

src/trainer.py, at the first step of a launch: `NEW RUN <timestamp>`, then `vars(args)` printed as a Python dict, then
the DeepSpeed strategy's config dict (where the run uses one); the mini-epoch lines follow (`console_lines.frameworks`
reads them). A folder's train_log.txt is appended to by every launch, so `parse(text)` returns the last launch's
arguments and DeepSpeed config (the run as it ended: Renata1214/rwkv-modbus-finetune's first two launches were fp16 and
wrote no loss, its last ten bf16), read with ast.literal_eval item by item, never run; `config_values` gives the
RunConfig keys they say:
* `method`: RWKV-PEFT's `peft` ('lora', and PiSSA, a LoRA initialised from the weights' SVD: lora, or qlora on a base
  quantized to 4 bits, `quant` nf4 / fp4; 'disha' / 'bone' and the other adapters: peft), its older `train_type`
  'state' (state tuning: peft), RWKV-LM-LoRA's `lora` True (lora);
* `stage` "sft" for `data_type` 'sft' (RWKV-PEFT's query / response data);
* `bf16` / `fp16` from Lightning's `precision` ('bf16', 16 / 'fp16'; 32 / 'fp32' / 'tf32': neither), the DeepSpeed
  config as `ds.*`;
* `model.name_or_path` from `load_model` (the weights the launch starts from), `learning_rate` from `lr_init`,
  `per_device_train_batch_size` from `micro_bsz`, `max_grad_norm` from `gradient_clip_val`, `weight_decay`,
  `model.vocab_size`. The step is a mini-epoch, not an optimizer step: warm-up and step counts are not carried over.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from ._config_keys import deepspeed_values
from .notebook_code.cells import parse_quietly

TEXT_KEY = "rwkv_args"  # LogRecords.texts key: {"args": ..., "deepspeed": ...} of the last launch, as JSON
_LAUNCH = re.compile(r"^NEW RUN \S+[ \t]*\r?\n(\{[^\n]*\})[ \t]*\r?$(?:\n(\{[^\n]*\})[ \t]*\r?$)?", re.MULTILINE)
_LORA_PEFT = ("lora", "pissa")
_FOUR_BIT = ("nf4", "fp4", "4bit")
_NO_ADAPTER = ("", "none")
_PRECISIONS = {"bf16": "bf16", "bf16-mixed": "bf16", "16": "fp16", "fp16": "fp16", "16-mixed": "fp16",
               "32": "fp32", "fp32": "fp32", "tf32": "fp32", "32-true": "fp32"}
_SAME_MEANING = (("lr_init", "learning_rate"), ("micro_bsz", "per_device_train_batch_size"),
                 ("gradient_clip_val", "max_grad_norm"), ("weight_decay", "weight_decay"),
                 ("vocab_size", "model.vocab_size"))


def parse(text: str) -> dict[str, dict]:
    """{"args": ..., "deepspeed": ...} of the last `NEW RUN` launch in the text ({} where there is none; "deepspeed"
    only where the launch printed a DeepSpeed config)."""
    if "NEW RUN " not in text:
        return {}
    last = None
    for last in _LAUNCH.finditer(text):
        pass
    if last is None:
        return {}
    args = _literal_dict(last.group(1))
    deepspeed = _literal_dict(last.group(2)) if last.group(2) else {}
    if not args:
        return {}
    return {"args": args, "deepspeed": deepspeed} if deepspeed else {"args": args}


def _literal_dict(line: str) -> dict[str, Any]:
    """The items of a printed dict whose values are literals (a value printed as an object's repr is left out)."""
    try:
        node = parse_quietly(line, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    if not isinstance(node, ast.Dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values):
        try:
            key, value = ast.literal_eval(key), ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue
        if isinstance(key, str):
            out[key] = list(value) if isinstance(value, tuple) else value  # (JSON has no tuple)
    return out


def config_values(launch: dict) -> dict[str, Any]:
    """The RunConfig keys the last launch's arguments and DeepSpeed config say (module docstring)."""
    args = launch.get("args") if isinstance(launch.get("args"), dict) else {}
    out: dict[str, Any] = {ours: args[theirs] for theirs, ours in _SAME_MEANING
                           if isinstance(args.get(theirs), (int, float)) and not isinstance(args[theirs], bool)}
    method = _method(args)
    if method:
        out["method"] = method
    if str(args.get("data_type", "")).lower() == "sft":
        out["stage"] = "sft"
    precision = _PRECISIONS.get(str(args.get("precision", "")).lower())
    if precision:
        out["bf16"], out["fp16"] = precision == "bf16", precision == "fp16"
    if isinstance(args.get("load_model"), str) and args["load_model"].strip():
        out["model.name_or_path"] = args["load_model"]
    if isinstance(launch.get("deepspeed"), dict):
        out.update(deepspeed_values(launch["deepspeed"]))
    return out


def _method(args: dict) -> str | None:
    """lora / qlora / peft where the arguments name an adapter or state tuning (module docstring), else None."""
    peft = str(args.get("peft", "")).lower()
    if peft in _LORA_PEFT:
        return "qlora" if str(args.get("quant", "")).lower() in _FOUR_BIT else "lora"
    if peft not in _NO_ADAPTER:
        return "peft"
    if str(args.get("train_type", "")).lower() == "state":
        return "peft"
    return "lora" if args.get("lora") is True else None
