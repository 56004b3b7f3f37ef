"""Megatron's printed arguments: the run's configuration when only its console log is left.

Megatron-LM and Megatron-DeepSpeed print every argument once at start-up (rank 0,
megatron/training/arguments.py `_print_args`):

    ------------------------ arguments ------------------------
      adam_beta2 ...................................... 0.999
      fp16 ............................................ True
      lr .............................................. 0.00015
    -------------------- end of arguments ---------------------

`parse_block(lines)` gives {name: value} (Python literals turned into values, the rest kept as
text; GPT-NeoX's `.....updated` / `.....default` tail dropped); `config_values(args)` names them
as the RunConfig does (the HF TrainingArguments names the cause rules read: learning_rate,
max_grad_norm, fp16, bf16, warmup_steps, ...).
"""
from __future__ import annotations

import ast
import re
from typing import Any

TEXT_KEY = "megatron_args"  # LogRecords.texts key: the block as JSON
_START = re.compile(r"-{8,} arguments -{8,}")
_END = re.compile(r"-{8,} end of arguments -{8,}")
_ARG = re.compile(r"^\s*([A-Za-z_]\w*) \.{2,} ?(.*?)\s*$")
# What a launcher puts before each line: torchrun's `[default0]:` / `[rank0]:`, srun's `0: ` (both, in that order), an
# MPI launcher's `[host:rank]:` (`[ip-26-0-147-189:0]:`)
LAUNCHER_PREFIX = r"(?:\d+: )?(?:\[(?:default|rank)\d+\]:|\[[\w.-]+:\d+\]:)?"
_LAUNCHER = re.compile("^" + LAUNCHER_PREFIX)
# Megatron name -> RunConfig key, where the meaning is the same.
_NAMES = {
    "lr": "learning_rate", "min_lr": "min_lr", "clip_grad": "max_grad_norm", "weight_decay": "weight_decay",
    "adam_beta1": "adam_beta1", "adam_beta2": "adam_beta2", "adam_eps": "adam_epsilon", "seed": "seed",
    "fp16": "fp16", "bf16": "bf16", "train_iters": "max_steps", "lr_warmup_iters": "warmup_steps",
    "lr_warmup_fraction": "warmup_ratio", "lr_decay_style": "lr_scheduler_type",
    "micro_batch_size": "per_device_train_batch_size", "global_batch_size": "global_batch_size",
    "log_interval": "logging_steps", "save_interval": "save_steps", "eval_interval": "eval_steps",
    "initial_loss_scale": "initial_loss_scale", "min_loss_scale": "min_loss_scale",
    "loss_scale": "loss_scale", "loss_scale_window": "loss_scale_window", "hysteresis": "hysteresis",
    "num_layers": "model.num_hidden_layers", "hidden_size": "model.hidden_size",
    "num_attention_heads": "model.num_attention_heads", "seq_length": "model.max_position_embeddings",
    "ffn_hidden_size": "model.intermediate_size", "padded_vocab_size": "model.vocab_size",
    "zero_stage": "ds.zero_optimization.stage",
}


def parse_block(lines: list[str]) -> dict[str, Any]:
    """The arguments of the first `arguments` block in `lines` ({} when there is none)."""
    start = next((i for i, line in enumerate(lines) if _START.search(line)), None)
    if start is None:
        return {}
    args: dict[str, Any] = {}
    for line in lines[start + 1:]:
        if _END.search(line):
            break
        m = _ARG.match(_LAUNCHER.sub("", line, count=1))
        if m:
            args[m.group(1)] = _value(m.group(2))
    return args


def _value(text: str) -> Any:
    text = _NEOX_SOURCE.sub("", text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if isinstance(value, dict) and isinstance(value.get("enabled"), bool):
        # GPT-NeoX's DeepSpeed sections: `bf16 ..... {'enabled': True}`; its older bf16 is an fp16 section of type
        # bfloat16 (`fp16 ..... {'enabled': True, 'type': 'bfloat16'}`)
        return "bfloat16" if value["enabled"] and value.get("type") == "bfloat16" else value["enabled"]
    return value if isinstance(value, (int, float, bool, str)) or value is None else text


# GPT-NeoX pads each value with dots and says where it came from: `precision ..... bfloat16..........updated`
_NEOX_SOURCE = re.compile(r"\.{2,}(?:updated|default)$")
# GPT-NeoX's `precision` argument -> the RunConfig flag it sets
_NEOX_PRECISION = {"bfloat16": "bf16", "fp16": "fp16", "float16": "fp16"}


def config_values(args: dict) -> dict[str, Any]:
    """The printed arguments as RunConfig keys (only those with an HF-named counterpart, and set).

    `lr_warmup_iters` counts only when neither a warm-up fraction nor a sample count replaces it
    (Megatron's order), so a run warmed up by fraction or samples never reads as `warmup_steps` 0.
    """
    out = {ours: args[theirs] for theirs, ours in _NAMES.items() if args.get(theirs) is not None}
    if out.get("fp16") == "bfloat16":
        out["fp16"], out["bf16"] = False, True
    flag = _NEOX_PRECISION.get(str(args.get("precision")).lower())
    if flag is not None:
        out[flag] = True
    if args.get("lr_warmup_fraction") is not None or (args.get("lr_warmup_samples") or 0) > 0:
        out.pop("warmup_steps", None)
    return out
