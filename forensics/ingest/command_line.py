"""A run's own command line, where a file keeps it: W&B's `wandb-metadata.json` (`args`, the script's argv) and the
`cmd = ...` line DeepSpeed's launcher prints (`[runner.py:571:main] cmd = python -u -m deepspeed.launcher.launch ...
train_mem.py --lora_enable True --bf16 True ...`).

`arguments(argv)` reads `--name value`, `--name=value` and a bare `--flag` (True); `config_values(args)` gives the
RunConfig keys the run profile reads, only where the argument's meaning is fixed by who defines it:
* LLaMA-Factory's own pair `--stage` and `--finetuning_type` (with `--quantization_bit`): `stage`, `method` and
  `_framework` "llamafactory";
* the HF TrainingArguments flags `--bf16` / `--fp16` (True, or given bare);
* a LoRA switch, `--lora_enable True` (LLaVA's train.py) or `--use_lora True`: `adapter.peft_type` "LORA" (with
  LLaVA's `--bits 4`, a 4-bit base: QLoRA).
Other arguments are left to the files that record the run's settings (training_args.bin, the tracker's config).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from ._jsonfile import read_json_object
from .config_files import llamafactory_values

TEXT_KEY = "command_line"  # LogRecords.texts key: the launcher's arguments as JSON
_DEEPSPEED_CMD = re.compile(r"^\[[^\]]*\] \[INFO\] \[runner\.py:\d+:main\] cmd = ([^\n\r]{1,20000})$", re.MULTILINE)
_TRUE = ("true", "1", "yes")
_LORA_SWITCHES = ("lora_enable", "use_lora")


def arguments(argv: list[str]) -> dict[str, Any]:
    """{name: value} of the `--name` arguments in `argv` (values as text; a bare flag is True)."""
    out: dict[str, Any] = {}
    for i, token in enumerate(argv):
        if not token.startswith("--") or len(token) < 3:
            continue
        name, eq, value = token[2:].partition("=")
        if not eq:
            following = argv[i + 1] if i + 1 < len(argv) else None
            value = following if following is not None and not following.startswith("--") else True
        out.setdefault(name, value)
    return out


def config_values(args: dict[str, Any]) -> dict[str, Any]:
    """RunConfig keys of the arguments whose meaning is fixed (module docstring)."""
    out: dict[str, Any] = {}
    if "stage" in args and "finetuning_type" in args:  # LLaMA-Factory's own arguments, as a pair
        said = llamafactory_values({k: args[k] for k in ("stage", "finetuning_type", "quantization_bit") if k in args})
        out.update({k: v for k, v in said.items() if k in ("stage", "method") or k.startswith("quant.")})
        out["_framework"] = "llamafactory"
    for flag in ("bf16", "fp16"):
        if _is_true(args.get(flag)):
            out[flag] = True
    if any(_is_true(args.get(switch)) for switch in _LORA_SWITCHES):
        out["adapter.peft_type"] = "LORA"
        if str(args.get("bits")) == "4":
            out["quant.load_in_4bit"] = True
    return out


def read_wandb_metadata(path: Path) -> dict[str, Any]:
    """The RunConfig keys of `wandb-metadata.json`'s `args` ({} where it has none)."""
    argv = read_json_object(path).get("args")
    return config_values(arguments([str(a) for a in argv])) if isinstance(argv, list) else {}


def console_arguments(text: str) -> dict[str, Any]:
    """The arguments of the `cmd = ...` line DeepSpeed's launcher prints, or {}."""
    m = _DEEPSPEED_CMD.search(text) if "runner.py" in text else None
    if m is None:
        return {}
    try:
        argv = shlex.split(m.group(1))
    except ValueError:  # an unclosed quote: the words as they are
        argv = m.group(1).split()
    return {k: v for k, v in arguments(argv).items() if isinstance(v, (str, bool))}


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in _TRUE)
