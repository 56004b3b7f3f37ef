"""The line of a console log that says the run's base model was loaded in 4 bits (`said_4bit`, for `console_facts`'
`console_4bit`): an adapter on such a base is QLoRA.
"""
from __future__ import annotations

import re

from .console_text import line_at, line_end


# A console that says its base model was loaded in 4 bits (`Loading model with 4-bit quantization...`, a printed
# `load_in_4bit=True`, a bitsandbytes 4-bit model name, LLaMA-Factory's `Quantizing model to 4 bit with bitsandbytes.`)
# or names QLoRA (`Q-LoRA`; QDoRA, a DoRA adapter on a 4-bit base: `Setting up QDoRa VietAI/vit5-base`): an adapter on
# it is QLoRA. (Only as the word, capital Q: `q_lora` is DeepSeek's query projection rank in MaxText's and Megatron's
# printed configs.)
_LOADED_4BIT = re.compile(
    r"(?i:\b4-bit quantiz|\bload_in_4bit\W{1,3}True\b|\bbnb[-_]4bit\b|\bquantizing (?:the )?model to 4 ?bit\b)"
    r"|(?<![A-Za-z0-9_=])Q-?(?:LoRA|LORA|DoRA|DORA|DoRa)(?![A-Za-z0-9_=])")
# A line that loads a model (a load word in English, Chinese, Japanese, Korean, Spanish, French, German) and names 4
# bits (`4bit`, `4-bit`, `nf4`, `load_in_4bit`) beside it: `加载 4bit 基座: Qwen/Qwen2.5-1.5B-Instruct` (loading
# the 4-bit base), `Loading the base in 4bit (nf4)`. A `4bit` elsewhere (a kernel, a merge, a flag listed) is no load.
# bitsandbytes' 4-bit layer by its class name, in a printed model (`(q_proj): Linear4bit(in_features=4096, ...`, PEFT's
# `lora.Linear4bit(`) or in bitsandbytes' own warning (`Input type into Linear4bit is torch.float16`): the weights
# are 4-bit, whatever the line says beside it (`bias=False` is no negation)
FOUR_BIT_LAYER = re.compile(r"(?<![A-Za-z0-9_])Linear4bit(?![A-Za-z0-9_])")
_FOUR_BIT_WORD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:4[-_ ]?bits?|nf4|load_in_4bit)(?![A-Za-z0-9])")
_LOAD_WORD = re.compile(
    r"(?i)\b(?:load|loads|loading|loaded|cargando|cargado|chargement|charg[ée]e?|lade|laden|geladen)\b"
    r"|加载|載入|载入|読み込|ロード|로드|불러")
_NEGATED_CJK = re.compile(r"不|未|没有|沒有|無し|しない|않")  # `不加载 4bit` (not loading in 4 bits)
# ... unless the line says it is not so (`Full fine-tuning (no QLoRA)`, `without 4-bit quantization`)
_NEGATED = re.compile(r"\b(?:no|not|without|False|disabled?)\b", re.IGNORECASE)
# Unsloth's warning naming the model it loaded (`unsloth/gemma-2-2b-it-bnb-4bit does not have a padding token! Will use
# pad_token = <pad>.`, from `model.config._name_or_path` in its patch_tokenizer): that `not` is the tokenizer's
_PAD_TOKEN_CLAUSE = re.compile(r" does not have a padding token! Will use pad_token = .*$")


def said_4bit(text: str) -> str | None:
    """The first line saying the base was loaded in 4 bits (or naming QLoRA) and not saying it was not, else the first
    line naming bitsandbytes' 4-bit layer (`FOUR_BIT_LAYER`), else the first short line that loads a model and names
    4 bits beside it (`_FOUR_BIT_WORD` with `_LOAD_WORD`, in any of several languages), or None."""
    for m in _LOADED_4BIT.finditer(text):
        line = line_at(text, m.start()).strip()
        if _in_a_web_address(text, m.start()):
            continue  # (`https://github.com/.../QDoRA`: a link names no base the run loaded)
        if not _NEGATED.search(_PAD_TOKEN_CLAUSE.sub("", line)):
            return line_end(line)
    m = FOUR_BIT_LAYER.search(text) if "Linear4bit" in text else None
    if m:
        return line_end(line_at(text, m.start()))
    for m in _FOUR_BIT_WORD.finditer(text):
        line = line_at(text, m.start()).strip()
        if len(line) <= 200 and _LOAD_WORD.search(line) and not _NEGATED.search(line) \
                and not _NEGATED_CJK.search(line):
            return line_end(line)
    return None


def _in_a_web_address(text: str, start: int) -> bool:
    """Whether the word at `start` is part of a web address (the text before it, back to a space, holds `://`)."""
    before = re.search(r"\S*\Z", text[max(0, start - 300):start]).group(0)
    return "://" in before or before.lower().startswith("www.")
