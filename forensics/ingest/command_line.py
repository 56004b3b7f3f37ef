"""A run's own command line, where a file keeps it: W&B's `wandb-metadata.json` (`args`, the script's argv) and the
`cmd = ...` line DeepSpeed's launcher prints (`[runner.py:571:main] cmd = python -u -m deepspeed.launcher.launch ...
train_mem.py --lora_enable True --bf16 True ...`).

`launch_command.arguments(argv)` reads `--name value`, `--name=value` and a bare `--flag` (True), and finds the one
launch command of a text (shared with `run`, which tells command files by it); `config_values(args)` gives the
RunConfig keys the run profile reads, only where the argument's meaning is fixed by who defines it:
* LLaMA-Factory's own pair `--stage` and `--finetuning_type` (with `--quantization_bit`): `stage`, `method` and
  `_framework` "llamafactory";
* the HF TrainingArguments flags `--bf16` / `--fp16` (True, or given bare);
* a LoRA switch, `--lora_enable True` (LLaVA's train.py) or `--use_lora True`: `adapter.peft_type` "LORA" (with
  LLaVA's `--bits 4`, a 4-bit base: QLoRA).
* `--model_name_or_path`: `model.name_or_path` (a name, read for the model's size as any model name is);
* the Python script the command runs (`train_pretrain.py`): `launch.script`, a name of the run's own (its words may say
  the stage, as MiniMind's train_pretrain.py / train_full_sft.py / train_lora.py / train_dpo.py do);
* the program that was launched, where it is a framework's own: `llamafactory-cli train` (LLaMA-Factory), `swift
  sft|pt|rlhf` (ms-swift), `axolotl train` / `-m axolotl.cli.train` (Axolotl): `_framework`;
* ms-swift's own `--train_type` (`--tuner_type`, v2's `--sft_type`), `--torch_dtype`, `--quant_bits` and `--model` on a
  `swift sft|pt|rlhf` command, read as its args.json is; with no `--bf16` / `--fp16`, swift sets the mixed precision
  from `--torch_dtype` (bfloat16: bf16, float16: fp16).
Other arguments are left to the files that record the run's settings (training_args.bin, the tracker's config).

Launch commands are read from W&B's metadata, from DeepSpeed's `cmd = ...` line, from a console line that is itself
the command (`CUDA_VISIBLE_DEVICES=0 python src/train_bash.py --stage sft ...`, `llamafactory-cli train ...`,
`deepspeed --num_gpus 8 train.py ...`, `accelerate launch ...`, `torchrun ...`; `\\` continuations joined) and from a
small text file beside the log that holds one such command (`command.txt`, `run.sh`) and from a notebook's shell
lines (`!python train.py --fp16`, in the cells that ran): only where the text holds exactly one (two are two runs, or a
script's stages: which one ran is not said).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..discover.launch_command import (COMMAND_FILE_BYTES, LAUNCHER_FRAMEWORKS, LAUNCHER_KEY, SCRIPT_KEY,
                                       arguments, launched_script, one_launch, words)
from ._jsonfile import read_json_object
from .framework_configs import llamafactory_values, swift_values

TEXT_KEY = "command_line"  # LogRecords.texts key: the launcher's arguments as JSON
_DEEPSPEED_CMD = re.compile(r"^\[[^\]]*\] \[INFO\] \[runner\.py:\d+:main\] cmd = ([^\n\r]{1,20000})$", re.MULTILINE)
_TRUE = ("true", "1", "yes")
_LORA_SWITCHES = ("lora_enable", "use_lora")
# ms-swift's arguments that say what was trained and in which dtype (its args.json names, `swift_values` reads them)
_SWIFT_ARGUMENTS = ("train_type", "tuner_type", "sft_type", "torch_dtype", "quant_bits", "model")
_SWIFT_DTYPE_PRECISION = {"bfloat16": "bf16", "float16": "fp16"}


def config_values(args: dict[str, Any]) -> dict[str, Any]:
    """RunConfig keys of the arguments whose meaning is fixed (module docstring)."""
    out: dict[str, Any] = {}
    launcher = args.get(LAUNCHER_KEY)
    if isinstance(launcher, str) and launcher in LAUNCHER_FRAMEWORKS:
        out["_framework"] = LAUNCHER_FRAMEWORKS[launcher]
    if isinstance(args.get(SCRIPT_KEY), str):  # its name may say the stage it runs (the run profile reads it)
        out["launch.script"] = args[SCRIPT_KEY]
    if isinstance(args.get("model_name_or_path"), str):
        out["model.name_or_path"] = args["model_name_or_path"]
    if "stage" in args and "finetuning_type" in args:  # LLaMA-Factory's own arguments, as a pair
        said = llamafactory_values({k: args[k] for k in ("stage", "finetuning_type", "quantization_bit") if k in args})
        out.update({k: v for k, v in said.items() if k in ("stage", "method") or k.startswith("quant.")})
        out["_framework"] = "llamafactory"
    if launcher == "swift":
        out.update(_swift_arguments(args))
    for flag in ("bf16", "fp16"):
        if _is_true(args.get(flag)):
            out[flag] = True
    if any(_is_true(args.get(switch)) for switch in _LORA_SWITCHES):
        out["adapter.peft_type"] = "LORA"
        if str(args.get("bits")) == "4":
            out["quant.load_in_4bit"] = True
    return out


def _swift_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """RunConfig keys of a `swift sft|pt|rlhf` command's own arguments (module docstring)."""
    out = swift_values({k: args[k] for k in _SWIFT_ARGUMENTS if isinstance(args.get(k), str)})
    flag = _SWIFT_DTYPE_PRECISION.get(str(args.get("torch_dtype")))
    if flag and "bf16" not in args and "fp16" not in args:  # swift's own choice, where the command made none
        out[flag] = True
    return out


def read_wandb_metadata(path: Path) -> dict[str, Any]:
    """The RunConfig keys of `wandb-metadata.json`'s `args` and of its `program`, the script they were handed to (W&B
    keeps the script apart from its argv: 480284856_RLHF_Training's ColossalAI `.../examples/train_sft.py`); {} where
    it has neither."""
    metadata = read_json_object(path)
    argv, program = metadata.get("args"), metadata.get("program")
    args = arguments([str(a) for a in argv]) if isinstance(argv, list) else {}
    script = launched_script([program]) if isinstance(program, str) else None
    return config_values({**args, SCRIPT_KEY: script} if script else args)


def console_arguments(text: str) -> dict[str, Any]:
    """The arguments of the `cmd = ...` line DeepSpeed's launcher prints, else of the one launch command the console
    holds as a line of its own (module docstring), or {}."""
    m = _DEEPSPEED_CMD.search(text) if "runner.py" in text else None
    if m is None:
        return one_launch(text)
    argv = words(m.group(1))
    args = {k: v for k, v in arguments(argv).items() if isinstance(v, (str, bool))}
    script = launched_script(argv)
    return {**args, SCRIPT_KEY: script} if script else args


def read_command_file(path: Path) -> dict[str, Any]:
    """The RunConfig keys of the one launch command a small text file holds ({} where it holds none or several)."""
    return launch_values(path.read_bytes()[:COMMAND_FILE_BYTES].decode("utf-8", errors="replace"))


def launch_values(text: str) -> dict[str, Any]:
    """The RunConfig keys of the one launch command a text holds (a command file, a notebook's shell lines), or {}
    where it holds none or several."""
    args = one_launch(text)
    return config_values(args) if args else {}


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in _TRUE)
