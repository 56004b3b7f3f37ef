"""The model's parameter count as a console states it, for the run profile (`console_facts`).

`parameter_count_said(text)` gives `console_n_params`: the whole model's count where a known line states it (OLMo's,
nanochat's, parameter-golf's, DeepSpeed's pipeline, Megatron's with one tensor and one pipeline rank, torchtitan's,
MiniMind's, ms-swift's, a script's `Model params :` or `Total params:`); `said_param_count(text)` the largest
`958,950,144 params` a script's own line says of no part of the model (`console_params_said`).
"""
from __future__ import annotations

import re

from .banners import KERAS_COUNT_SIZE
from .console_text import line_at, line_end
from .megatron_args import LAUNCHER_PREFIX


# A script's own `Model params : 299,392,704  (0.299B)` line (the whole model's count, a parenthesis after it at most)
_MODEL_PARAMS_SAID = re.compile(
    r"^[ \t]*(?i:model param(?:eter)?s)[ \t]*[:=][ \t]*([\d,]{4,})(?:[ \t]+\([^()\n]{1,30}\))?"
    r"[ \t]*\r?$", re.MULTILINE)
# OLMo's `Total number of parameters: N`; a parameter summary's `Total params: N` / `Total Parameters: N`; OpenNMT-py's
# `[... INFO] * number of parameters: N`, encoder, decoder and generator together (kmilink_OpenNMT-Indonesia-Bima);
# Keras 3's size after the count (`KERAS_COUNT_SIZE`)
_TOTAL_PARAMS = re.compile(
    r"(?:(?i:total)|INFO\] \*) (?:number of parameters|[Pp]aram(?:eter)?s)[ \t]*[:=][ \t]*([\d,]{4,})"
    + KERAS_COUNT_SIZE + r"[ \t]*\r?$", re.MULTILINE)
# parameter-golf's train_gpt.py: `model_params:26829913`, a line of its own
# nanochat's base_train.py before its `Parameter counts:` table: `Number of parameters: 560,988,160`, a line of its own;
# a notebook's bare `print("Parameters", model.num_parameters())`: `Parameters 125239296` (eduseiti_ia368v_dd_class_05).
# The line holds the name and the count only: not `Trainable parameters: N` (a part), nor a table's row or head.
_NUMBER_OF_PARAMS = re.compile(
    r"^[ \t]*(?:[Nn]umber of )?[Pp]arameters[ \t]*[:=]?[ \t]*(\d{1,3}(?:,\d{3})+|\d{4,})[ \t]*\r?$",
    re.MULTILINE)
_MODEL_PARAMS = re.compile(r"^model_params[ \t]*[:=][ \t]*(\d{4,})[ \t]*\r?$", re.MULTILINE)
# torchtitan's train.py: `Model llama3 8B size: 8,030,261,248 total parameters` (its colour codes around `size:`)
_TITAN_MODEL_SIZE = re.compile(
    r"\bModel [^\n]{1,120}?size: (?:\x1b\[[0-9;]*m)?(\d{1,3}(?:,\d{3})+|\d{4,}) total parameters")
# MiniMind's trainer_utils.py: `Model Params: 25.83M` (millions, two decimals)
_MODEL_PARAMS_M = re.compile(r"^Model Params: (\d{1,6}(?:\.\d{1,3})?)M[ \t]*\r?$", re.MULTILINE)
# ms-swift's model summary (`get_model_parameter_info`): `[INFO:swift] model_parameter_info: PeftModelForCausalLM:
# 4038.9832M Params (16.5151M Trainable [0.4089%]), 0.0001M Buffers.` - the whole model, an adapter's weights included
_SWIFT_MODEL_PARAMS = re.compile(r"model_parameter_info: \w+: (\d{1,7}(?:\.\d{1,6})?)M Params \(")
# nanochat base_train / autoresearch train.py: `Parameter counts:`, one `name : 1,234` line each, `total : N`.
_PARAMETER_COUNTS = re.compile(r"^Parameter counts:[ \t]*\r?\n(?:[ \t]*\w+[ \t]*: [\d,]+[ \t]*\r?\n){0,30}?"
                               r"[ \t]*total[ \t]*: (\d{1,3}(?:,\d{3})+|\d{4,})[ \t]*\r?$", re.MULTILINE)
# A script's own line with a count before the word: `Modele charge: 958,950,144 params (step 21000)`. A count of part
# of the model (nanoGPT's `num decayed parameter tensors: 50, with 124,354,560 parameters`, a module tree's `wte:
# Embedding (38,633,472 parameters)`, `Vision encoder: 303,507,456 params`, an adapter's) is no model size: lines
# naming a part are passed over, and of the rest the largest count is the model's.
_SAID_COUNT = re.compile(r"(?<![\d,.(])(\d{1,3}(?:,\d{3}){2,}|\d{7,})\s+param(?:eter)?s\b", re.IGNORECASE)
# the count after its name: `Model parameters: 124,439,808`, `Total parameters = 1234567890`, lit-gpt's `Total
# parameters 162,322,944`
_NAMED_COUNT = re.compile(
    r"\b(?:model|total)\s+param(?:eter)?s\s*[:=]?\s*(\d{1,3}(?:,\d{3}){2,}|\d{7,})(?![\d,.])|"
    # ... or before `total parameters`: torchtitan's `Model llama3 8B size: 8,030,261,248 total
    # parameters`, torchtune's tutorial `6771970048 total params,`
    r"(?<![\d,.])(\d{1,3}(?:,\d{3}){2,}|\d{7,})\s+total\s+param(?:eter)?s\b|"
    # ... or the whole before the trainable part: `596,049,920 total, 596,049,920 trainable parameters`
    r"(?<![\d,.])(\d{1,3}(?:,\d{3}){2,}|\d{7,})\s+total(?=\s*,\s*[\d,]+\s+trainable\s+param(?:eter)?s\b)",
    re.IGNORECASE)
_PART_WORDS = re.compile(
    r"\b(?:(?:non-)?trainable|frozen|embeddings?|decayed|tensors?|groups?|stages?|ranks?|q?lora|peft|"
    r"adapters?|encoders?|vision|visual|lm[_ ]head|heads?:|teacher|student|reward|critic|"
    r"reference|ref|draft|pruned?|missing|skipped|unexpected|updated|experts?|active|optimizer|"
    r"processed)\b", re.IGNORECASE)
# DeepSpeed's PipelineEngine, once per stage: `RANK=0 STAGE=0 LAYERS=14 [0, 14) STAGE_PARAMS=... TOTAL_PARAMS=N (...)
# UNIQUE_PARAMS=N (...)`; UNIQUE_PARAMS counts tied weights once, the model's size.
_PIPE_PARAMS = re.compile(r"^.*?\bUNIQUE_PARAMS=(\d{4,})\b.*$", re.MULTILINE)


_MOST_PARAMS = 10 ** 13  # ten trillion: past any model trained; a larger printed count is no model's size


def parameter_count_said(text: str) -> dict:
    """`console_n_params` (with its `_line`): the whole model's count as OLMo, nanochat, parameter-golf, DeepSpeed's
    pipeline, a script's `Model params :` line, Megatron (one tensor and one pipeline rank), torchtitan, MiniMind or
    ms-swift say it."""
    out: dict = {}
    m = _TOTAL_PARAMS.search(text) or _PARAMETER_COUNTS.search(text) or _MODEL_PARAMS.search(text) or (
        "arameters" in text and _NUMBER_OF_PARAMS.search(text)) or (
        "UNIQUE_PARAMS=" in text and _PIPE_PARAMS.search(text)) or _MODEL_PARAMS_SAID.search(text) or (
        "model parallel rank" in text and _megatron_whole_model(text)) or (
        " total parameters" in text and _TITAN_MODEL_SIZE.search(text))
    if m and 0 < int(m.group(1).replace(",", "")) <= _MOST_PARAMS:
        out["console_n_params"] = int(m.group(1).replace(",", ""))
        out["console_n_params_line"] = line_end(line_at(text, m.start(1)))  # the total's own line
    elif m := ("Model Params: " in text and _MODEL_PARAMS_M.search(text)) or (
            "model_parameter_info: " in text and _SWIFT_MODEL_PARAMS.search(text)):
        out["console_n_params"] = round(float(m.group(1)) * 1e6)
        out["console_n_params_line"] = line_end(line_at(text, m.start(1)))
    elif m := _TOTAL_PARAMS_SCALED.search(text):
        out["console_n_params"] = round(float(m.group(1)) * _SCALES[m.group(2)])
        out["console_n_params_line"] = line_end(line_at(text, m.start(1)))
    return out


# ... the total in thousands, millions or billions after its name: `total params = 10.79M` (MatthewZhang473_GPT_from_
# scratch's gpt.py, a 10.79M character GPT), `Total parameters: 124.4M`
_TOTAL_PARAMS_SCALED = re.compile(r"(?i:total) (?:number of parameters|[Pp]aram(?:eter)?s)[ \t]*[:=][ \t]*"
                                  r"(\d{1,4}(?:\.\d{1,6})?)[ \t]?([KMB])[ \t]*\r?$", re.MULTILINE)


# Megatron prints each model-parallel rank's share (`> number of parameters on (tensor, pipeline) model parallel rank
# (0, 0): 1040517632`); with one tensor and one pipeline rank (its arguments block) rank (0, 0) holds the whole model.
_MEGATRON_RANK_PARAMS = re.compile(
    r"number of parameters on \(tensor, pipeline\) model parallel rank \(0, 0\): (\d{4,})")


_MEGATRON_PARALLEL = re.compile(r"(?m)^" + LAUNCHER_PREFIX + r"\s*(tensor|pipeline)_model_parallel_size "
                                r"\.{2,} ?(\d+)\s*$")


def _megatron_whole_model(text: str) -> re.Match | None:
    """Megatron's count for rank (0, 0) where the arguments say one tensor and one pipeline rank, else None."""
    sizes = {m.group(1): int(m.group(2)) for m in _MEGATRON_PARALLEL.finditer(text)}
    if sizes.get("tensor") != 1 or sizes.get("pipeline") != 1:
        return None
    return _MEGATRON_RANK_PARAMS.search(text)


def said_param_count(text: str) -> tuple[int, str] | None:
    """The largest `N params` a line says that names no part of the model (`_SAID_COUNT`; a count in thousands,
    millions or billions, `0.209729 M parameters` as Karpathy's GPT prints it, `95.87M params`), with its line. A part's
    words count before the number and in its own clause after it (`trainable params: N`, `N frozen params`), not in a
    note that follows (`95.87M params (policy trainable, reference frozen)`)."""
    best = None
    for m in [*_SAID_COUNT.finditer(text), *_NAMED_COUNT.finditer(text), *_SCALED_COUNT.finditer(text)]:
        line = line_at(text, m.start())
        count = _count_of(m)
        if len(line) <= 300 and not _names_a_part(text, m) and 1000 <= count <= _MOST_PARAMS \
                and not _in_prose(text, m) and (best is None or count > best[0]):
            best = (count, line_end(line))
    return best


# A count in thousands, millions or billions before `params` (the unit a capital, so `5 m params` of prose is no
# count): a tiny GPT's `print(sum(p.numel() ...)/1e3, 'K parameters')` gives `59.328 K parameters`
# (evintunador_micro-GPT-sandbox); the unit spelled out, print's own space before it (`print(n / 1e6, " Million
# parameters")`: `19.837954  Million parameters`, Hari-Krishna-QmFuZGk_llm_mastery's small-LLM course GPT)
_SCALED_COUNT = re.compile(r"(?<![\w.,])(\d{1,4}(?:\.\d{1,6})?)"
                           r"(?:\s?([KMB])|[ \t]{1,2}([Tt]housand|[Mm]illion|[Bb]illion))\s+param(?:eter)?s\b")


# What may stand before a count whose unit is spelled out: nothing, or a short label (`Model size: `). Prose says "7
# billion parameters" of other models ("Falcon-7B was created using 7 billion parameters": rlhinrichs; a markdown
# cell's "a model with 100 million parameters might be ...": abdallaelmahdy), where a print puts the count first.
_LABEL_ONLY = re.compile(r"\s*(?:[A-Za-z][\w ]{0,30}:\s*)?")


def _in_prose(text: str, m: re.Match) -> bool:
    """Whether a count with its unit spelled out (`19.8 Million parameters`) stands inside a sentence rather than
    opening its line or following a short label."""
    if m.re is not _SCALED_COUNT or not m.group(3):
        return False
    line_start = max(text.rfind("\n", 0, m.start()), text.rfind("\r", 0, m.start())) + 1
    return not _LABEL_ONLY.fullmatch(text[line_start:m.start()])


_SCALES = {"K": 1e3, "M": 1e6, "B": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9}


def _count_of(m: re.Match) -> int:
    if m.re is _SCALED_COUNT:
        return round(float(m.group(1)) * _SCALES[m.group(2) or m.group(3).lower()])
    return int(next(g for g in m.groups() if g).replace(",", ""))


def _names_a_part(text: str, m: re.Match) -> bool:
    """Whether the words of a count's line before it, or of its clause after it, name a part of the model."""
    line_start = max(text.rfind("\n", 0, m.start()), text.rfind("\r", 0, m.start())) + 1
    after = line_at(text, m.start())[m.end() - line_start:]
    clause = re.split(r"[(,;\[]", after, maxsplit=1)[0]
    return bool(_PART_WORDS.search(text[line_start:m.end()]) or _PART_WORDS.search(clause))
