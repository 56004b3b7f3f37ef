"""What a console says of the recipe that ran it: torchtune's recipe, ms-swift's, axolotl's and PaddleNLP's loggers,
MaxText's and LitGPT's printed parameters, verl's printed config, MiniMind's LoRA script, Marian NMT's banner.

`recipe_facts(text)` -> {console_framework, console_method, console_precision, each with its `_line`} as far as said.
"""
from __future__ import annotations

import re

from .console_lines.marian import marian_facts
from .console_text import bracket_depths, line_at, line_end

# torchtune's recipe start (torchtune/config/_utils.py `log_config`): `Running LoRAFinetuneRecipeSingleDevice with
# resolved config:` then the YAML; the model builder in it says QLoRA
# (`_component_: torchtune.models.llama3.qlora_llama3_8b`)
_TORCHTUNE_RECIPE = re.compile(r"\bRunning (\w+Recipe\w*) with resolved config:")
_TORCHTUNE_BUILDER = re.compile(r"_component_: torchtune\.models\.[\w.]*?\.(q?lora|dora)_\w+")
# ... and its top-level `dtype: bf16`, the dtype the recipe builds the model in and trains in (no autocast); a
# component's own `dtype:` is indented under it
_TORCHTUNE_DTYPE = re.compile(r"^dtype: (bf16|fp16|fp32)[ \t]*\r?$", re.MULTILINE)
# axolotl's log format (src/axolotl/logging_config.py): `[time] [INFO] [axolotl.train.execute_training:203] [PID:1] ...`
_AXOLOTL_LOGGER = re.compile(r"\[axolotl\.[\w.]+:\d+\]")
_LORA_COUNT = re.compile(r"^LoRA \u53c2\u6570\u91cf: [\d.]+ ?M\b.*$", re.MULTILINE)
_MAXTEXT_DTYPE = re.compile(r"Config param dtype: (bfloat16|float16|float32)\b")
# ms-swift's logger (swift/utils/logger.py): `[INFO:swift] ...` (2.x and 3.x)
_SWIFT_LOGGER = re.compile(r"^\[INFO:swift\][^\n]*", re.MULTILINE)
# LitGPT's scripts print their hyperparameters with pprint: `{'checkpoint_dir': PosixPath(...), ..., 'precision':
# 'bf16-true', ..., 'lora_r': 8, ...}` (Lightning Fabric's precision names; `quantize: 'bnb.nf4'` is QLoRA)
_LITGPT_PRECISION = re.compile(r"'precision': '(bf16|16|32)-(?:true|mixed)'")
_LITGPT_PRECISIONS = {"bf16": "bf16", "16": "fp16", "32": "fp32"}
PRECISION_NAMES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "float32": "fp32",
                   "fp32": "fp32",
                   "16-bit": "fp16", "16bit": "fp16"}  # (Lightning's `Using 16-bit Automatic Mixed Precision`)
# verl's RL trainer prints its whole config with pprint at start (`{'actor_rollout_ref': {'actor': {...`): the policy
# model's `'lora_rank': 0` (no adapter: every weight trained; verl's default) comes first, in actor_rollout_ref.model,
# and the actor's FSDP config holds its mixed-precision `'dtype': 'bfloat16'` (its `model_dtype` is the stored weights')
_VERL_CONFIG = re.compile(r"\{'actor_rollout_ref': \{")
_VERL_LORA_RANK = re.compile(r"'lora_rank': (\d+),")
_VERL_LORA_KEY = re.compile(r"'lora_\w+': ")  # any adapter setting (rank, alpha, adapter path) printed
_VERL_FSDP_DTYPE = re.compile(
    r"'fsdp_config': \{(?:[^\n]*\n){0,40}?[^\n]*?'(?:param_)?dtype': '(bfloat16|bf16|float16|fp16|"
    r"float32)'")


def recipe_facts(text: str) -> dict:
    """The framework and method torchtune's recipe start, ms-swift's or axolotl's logger names or LitGPT's printed
    hyperparameters say (`console_framework`, `console_method`, each with `console_framework_line`), and the precision
    of LitGPT's and of torchtune's printed config (`dtype: bf16`)."""
    out: dict = {}
    m = _TORCHTUNE_RECIPE.search(text) if "with resolved config" in text else None
    if m:
        builder = _TORCHTUNE_BUILDER.search(text)
        kind = builder.group(1) if builder else "lora" if m.group(1).startswith(("LoRA", "Lora")) else (
            "full" if m.group(1).startswith("Full") else None)
        out.update(console_framework="torchtune", console_framework_line=m.group(0))
        if kind:
            out["console_method"] = "qlora" if kind == "qlora" else "lora" if kind in ("lora", "dora") else "full"
        dtype = _TORCHTUNE_DTYPE.search(_torchtune_config(text, m))
        if dtype:
            out["console_precision"], out["console_precision_line"] = (PRECISION_NAMES[dtype.group(1)],
                                                                       dtype.group(0).strip())
    m = _SWIFT_LOGGER.search(text) if "[INFO:swift]" in text else None
    if m:
        out.update(console_framework="swift", console_framework_line=m.group(0).strip()[:160])
    m = _LORA_COUNT.search(text) if "LoRA" in text else None
    if m:  # MiniMind's LoRA script (trainer/train_lora.py): `LoRA 参数量: 0.262 M`
        out.update(console_method="lora", console_method_line=m.group(0).strip())
    m = _MAXTEXT_DTYPE.search(text) if "Config param dtype: " in text else None
    if m:  # MaxText's pyconfig prints every parameter: `Config param dtype: bfloat16`
        out.update(console_framework="maxtext", console_framework_line=m.group(0))
        out["console_precision"], out["console_precision_line"] = PRECISION_NAMES[m.group(1)], m.group(0)
    m = _AXOLOTL_LOGGER.search(text) if "[axolotl." in text else None
    if m:
        out.update(console_framework="axolotl", console_framework_line=line_end(line_at(text, m.start())))
    if "paddlenlp commit id" in text:
        out.update(_paddlenlp_facts(text))
    m = _VERL_CONFIG.search(text) if "'actor_rollout_ref'" in text else None
    if m:
        out.update(_verl_config_facts(text[m.start():]))
    if "[marian] Marian v" in text:
        out.update(marian_facts(text))
    m = _LITGPT_PRECISION.search(text) if "'precision': '" in text and "PosixPath(" in text else None
    if m:
        out.update(console_framework="litgpt", console_framework_line=m.group(0))
        out["console_precision"], out["console_precision_line"] = _LITGPT_PRECISIONS[m.group(1)], m.group(0)
        if "'lora_r': " in text:
            out["console_method"] = "qlora" if "'quantize': 'bnb.nf4" in text else "lora"
    return out


def _torchtune_config(text: str, start: re.Match) -> str:
    """The YAML torchtune's `log_config` prints after its recipe line: from there to the first blank line after it
    (the log's next lines are the recipe's own)."""
    rest = text[start.end():].lstrip("\r\n")
    return re.split(r"\r?\n[ \t]*\r?\n", rest, maxsplit=1)[0]


def _verl_config_facts(config: str) -> dict:
    """What verl's printed RL-trainer config says: the framework and objective (its `actor_rollout_ref` is the policy
    the rollouts train), the method (`'lora_rank': 0` or no LoRA key at all: full, every weight of the actor trained;
    a rank above 0: LoRA) and the actor's mixed precision."""
    first = f"verl's printed config: {_squeezed_line(config, 0)}"
    out: dict = {"console_framework": "verl", "console_framework_line": first,
                 "console_objective": "rl", "console_objective_line": first}
    rank = _VERL_LORA_RANK.search(config)
    end = _closing_brace(config)
    if rank:
        out["console_method"] = "lora" if int(rank.group(1)) > 0 else "full"
        out["console_method_line"] = f"verl's printed config: {_squeezed_line(config, rank.start())}"
    elif end is not None and not _VERL_LORA_KEY.search(config[:end]):
        # (an older config without the key trained no adapter: verl had none; a print cut short says nothing)
        out["console_method"] = "full"
        out["console_method_line"] = f"{first} (no LoRA key in it: the whole actor trained)"
    dtype = _VERL_FSDP_DTYPE.search(config)
    if dtype:
        out["console_precision"] = PRECISION_NAMES[dtype.group(1)]
        out["console_precision_line"] = (f"verl's printed config, the actor's fsdp_config: "
                                         f"{_squeezed_line(config, dtype.start(1))}")
    return out


def _closing_brace(text: str) -> int | None:
    """The position after the brace that closes the dict `text` opens with (quoted text skipped), or None where the
    text ends first: a print cut short."""
    return next((i + 1 for i, ch, depth in bracket_depths(text) if depth == 0 and ch in ")]}"), None)


def _squeezed_line(text: str, at: int) -> str:
    """The line holding position `at`, its runs of spaces (pprint's indent, a Ray worker's prefix) made one."""
    return " ".join(line_at(text, at).split())[-120:]


# PaddleNLP's Trainer prints its arguments one a line under `Model / Data / Training Configuration Arguments` headers,
# each block opened by `paddle commit id` and `paddlenlp commit id` lines (paddlenlp/trainer/argparser.py,
# training_args.py `print_config`): `[2024-12-31 16:43:30,888] [   DEBUG] - bf16                          : True`
_PADDLENLP_FIELD = re.compile(r"^\[[^\]\n]*\] \[\s*DEBUG\] - (\w+)\s*: ?(.*?)\s*$", re.MULTILINE)
_PADDLENLP_ADAPTERS = ("lora", "prefix_tuning", "vera", "lokr", "reft", "pissa", "use_mora")
_PADDLENLP_COMMIT = re.compile(r"^.*\] - paddlenlp commit id\s*: \S*$", re.MULTILINE)
_PADDLENLP_QUANTIZED = ("nf4", "fp4")  # weight_quantize_algo of a QLoRA run (int8/int4 quantize a full model too)


def _paddlenlp_facts(text: str) -> dict:
    """Framework paddlenlp, the method (LoRA, QLoRA where the base is nf4/fp4-quantized, another adapter, else full)
    and the precision (bf16 / fp16 flags, fp32 with both off) PaddleNLP's printed arguments say; a field printed
    again by a later launch in the same file stands."""
    commit = _PADDLENLP_COMMIT.search(text)
    if commit is None:
        return {}
    out: dict = {"console_framework": "paddlenlp", "console_framework_line": commit.group(0).strip()}
    fields = {m.group(1): (m.group(2), m.group(0)) for m in _PADDLENLP_FIELD.finditer(text)}
    on = [name for name in _PADDLENLP_ADAPTERS if fields.get(name, ("",))[0] == "True"]
    if on:
        quantized = on[0] == "lora" and fields.get("weight_quantize_algo", ("",))[0] in _PADDLENLP_QUANTIZED
        out["console_method"] = "qlora" if quantized else "lora" if on[0] == "lora" else "peft"
        out["console_method_line"] = fields[on[0]][1].strip()
    elif "lora" in fields and "prefix_tuning" in fields:  # the model arguments printed, no adapter on
        out["console_method"], out["console_method_line"] = "full", fields["lora"][1].strip()
    flags = {name: fields[name] for name in ("bf16", "fp16") if name in fields}
    half = next((name for name in ("bf16", "fp16") if flags.get(name, ("",))[0] == "True"), None)
    if half:
        out["console_precision"], out["console_precision_line"] = half, flags[half][1].strip()
    elif len(flags) == 2 and all(value == "False" for value, _ in flags.values()):
        out["console_precision"], out["console_precision_line"] = "fp32", flags["fp16"][1].strip()
    return out


# What stops a training process from outside its own code: the GPU out of memory, a CUDA fault, NCCL (a collective
