"""The precision a console log states (`precision_said`, for `console_facts`): DeepSpeed's config print, OLMo's or
Composer's config, nanochat's COMPUTE_DTYPE, a bitsandbytes compute dtype, torchtune's or Unsloth's words, torchtitan's
echoed flag, Lightning's AMP line, the run's own autocast line that torch's deprecation warning quotes.
"""
from __future__ import annotations

import re

from .console_recipes import PRECISION_NAMES
from .console_text import line_end
from .console_warnings import CAST_BACK


# DeepSpeed's config print: `bfloat16_enabled ..... True` (before 0.16), `float16_config ..... enabled=True ...` (later)
_DS_PRECISION = re.compile(r"^.*?\b(?:(bfloat16|fp16)_enabled\s*\.{3,}\s*True|(bfloat16|float16)_config\s*\.{3,}\s*"
                           r"enabled=True\b.*?)\s*$", re.MULTILINE)
# OLMo's printed TrainConfig (`precision='amp_bf16'`), Composer's printed YAML config (`precision: amp_bf16`)
_AMP_PRECISION = re.compile(
    r"\bprecision(?:='amp_(bf16|fp16)'|: amp_(bf16|fp16)\b)|compute dtype: torch\.(bfloat16|float16)\b")
# torchtune's recipes: `Model is initialized with precision torch.bfloat16.` (the dtype it trains in: no autocast)
_TORCHTUNE_PRECISION = re.compile(r"^.*?\bModel is initialized with precision torch\.(bfloat16|float16|float32)\b.*$",
                                  re.MULTILINE)
# torchtitan's mixed-precision flag echoed in its launch command (`--training.mixed_precision_param=bfloat16`: FSDP's
# param dtype, autocast's where FSDP is off); Lightning's / Fabric's start-up line for its AMP plugin (`Using 16-bit
# Automatic Mixed Precision (AMP)`: float16 with a GradScaler; `Using bfloat16 Automatic Mixed Precision (AMP)`)
_TITAN_MIXED_PRECISION = re.compile(r"--training\.mixed_precision_param[= ](bfloat16|float16|float32)\b")
_LIGHTNING_AMP = re.compile(
    r"^.*?\bUsing (16-?bit|bfloat16)(?: native)? Automatic Mixed Precision \(AMP\).*$", re.MULTILINE)
# torch's deprecation warning for `torch.cuda.amp.autocast` quotes the calling line of the run's own script (not a
# library's: site-packages) under it; the warning fires only where autocast is entered, on CUDA, and with no dtype the
# autocast is float16 (PUFAI_GibberishGPT: `with torch.cuda.amp.autocast():` at gpt_train_script.py:518;
# XIAOXIN-Cyh_XiaoXin-LLM: `ctx = nullcontext() if device_type == "cpu" else torch.cuda.amp.autocast()`). Any other
# argument (`enabled=...`, a dtype held in a variable) leaves it unsaid.
_AUTOCAST_ECHO = re.compile(r"^(?P<file>[^\n]*?\.py):\d+: FutureWarning: `torch\.cuda\.amp\.autocast\(args\.\.\.\)` is "
                            r"deprecated\.[^\n]*\n[ \t]+"
                            r"(?P<line>[^\n]*?\btorch\.cuda\.amp\.autocast\((?P<args>[^()\n]*)\)[^\n]*)", re.MULTILINE)
_AUTOCAST_DTYPE = {"": "fp16", "dtype=torch.float16": "fp16", "dtype=torch.bfloat16": "bf16"}
# Unsloth switching a model that cannot train in float16 to float32 (Gemma 3 on a T4): `Unsloth: Switching to float32
# training since model cannot work with float16`, `Unsloth: Using float16 precision for gemma3 won't work! Using
# float32.` (the second names the model type it is about: a notebook may try one model and train another)
_UNSLOTH_FP32 = re.compile(r"Unsloth: Switching to (float32) training\b[^\n]*")
_UNSLOTH_FP32_FOR = re.compile(r"Unsloth: Using float16 precision for (\S+) won't work! Using (float32)\b[^\n]*")
# nanochat's `COMPUTE_DTYPE: torch.float32 (...)` (scripts/base_train.py, chat_sft.py): no autocast, this is the dtype.
_COMPUTE_DTYPE = re.compile(r"^COMPUTE_DTYPE: torch\.(bfloat16|float16|float32)\b.*$", re.MULTILINE)
# a bitsandbytes 4-bit config printed as it is loaded (Unsloth's vLLM `Bitsandbytes config using kwargs = {...,
# 'load_in_4bit': True, 'bnb_4bit_compute_dtype': 'bfloat16', ...}`): the 4-bit layers compute, and train, in that dtype
_BNB_COMPUTE = re.compile(r"""['"]load_in_4bit['"]: True\b[^\n]*?['"]bnb_4bit_compute_dtype['"]: ['"]?(?:torch\.)?"""
                          r"""(bfloat16|float16|float32)\b""")


def precision_said(text: str) -> dict:
    """`console_precision` (with its `_line`, and `_model` where Unsloth names the model it is about) from
    DeepSpeed's config print, OLMo's or Composer's config, nanochat's COMPUTE_DTYPE, a bitsandbytes compute dtype,
    torchtune's or Unsloth's words, torchtitan's echoed flag, Lightning's AMP line."""
    out: dict = {}
    m = (_DS_PRECISION.search(text) or _AMP_PRECISION.search(text) or _COMPUTE_DTYPE.search(text)
         or ("bnb_4bit_compute_dtype" in text and _BNB_COMPUTE.search(text))
         or ("Model is initialized with precision" in text and _TORCHTUNE_PRECISION.search(text))
         or ("Unsloth: " in text and _UNSLOTH_FP32.search(text))
         or ("mixed_precision_param" in text and _TITAN_MIXED_PRECISION.search(text))
         or ("Automatic Mixed Precision" in text and _LIGHTNING_AMP.search(text))
         or ("cast back the input" in text and CAST_BACK.search(text)))
    if m:
        out["console_precision"] = PRECISION_NAMES[next(g for g in m.groups() if g)]
        out["console_precision_line"] = line_end(m.group(0))
    elif "Unsloth: " in text and (m := _UNSLOTH_FP32_FOR.search(text)):
        out["console_precision"], out["console_precision_model"] = "fp32", m.group(1)
        out["console_precision_line"] = line_end(m.group(0))
    elif "torch.cuda.amp.autocast(args...)" in text:
        out.update(_script_autocast(text))
    return out


def _script_autocast(text: str) -> dict:
    """`console_precision` from the run's own autocast line that torch's deprecation warning quotes."""
    for m in _AUTOCAST_ECHO.finditer(text):
        said = _AUTOCAST_DTYPE.get(re.sub(r"\s+", "", m.group("args")))
        if said and not re.search(r"[\\/](?:site|dist)-packages[\\/]", m.group("file")):
            return {"console_precision": said, "console_precision_line": m.group("line").strip()}
    return {}
