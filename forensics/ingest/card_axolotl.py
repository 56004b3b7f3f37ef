"""The axolotl config a model card embeds: axolotl's callback writes the Trainer's card with `axolotl version: `0.4.0``
and then the run's own YAML config in a ```yaml fence (under `<details><summary>See axolotl config</summary>`). That
block is the run's configuration, read as an axolotl YAML file is (`framework_configs.axolotl_values`), and says:
* method: `adapter: lora` / `qlora` an adapter; no `adapter:` key a full fine-tune (axolotl trains every weight unless
  an adapter is named: docs/config.qmd, "If you want to use 'lora' or 'qlora' or leave blank to train all parameters
  in original model");
* precision: `bf16: true` / `fp16: true` (`bf16: auto` says nothing until the GPU is known);
* objective, as `stage` (`_stage`): `rl: dpo` / `kto` / `orpo` / `simpo` preference, `rl: grpo` RL, `reward_model:
  true` a reward model; else the datasets' `type:` - axolotl's prompt formats (alpaca, sharegpt, chat_template, ...,
  or a user-defined format given as a mapping of fields) are supervised fine-tuning, `type: completion` raw text,
  which axolotl's docs (dataset-formats, "Pre-training without streaming") give for pre-training, as is
  `pretraining_dataset:`. Datasets of both kinds, or of a type not known here, say no objective.

`parse(text)` gives {"version", "values": RunConfig keys, "why": {key: the config's lines that said it}} or {}.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import UnreadableFile
from .flat_yaml import parse_flat_yaml
from .framework_configs import axolotl_values, looks_like_axolotl

TEXT_KEY = "card_axolotl_config"  # LogRecords.texts key: what `parse` gives, as JSON
_VERSION = re.compile(r"^axolotl version: `?([\w.+-]+)`?[ \t]*\r?$", re.MULTILINE)
_FENCE_OPEN = re.compile(r"\s*```ya?ml[ \t]*\r?\n")  # right under the version line
_FENCE_CLOSE = re.compile(r"^```[ \t]*\r?$", re.MULTILINE)
_TOP_KEY = re.compile(r"^[A-Za-z_][\w.-]*\s*:", re.MULTILINE)
# a dataset's `type:` (not `ds_type:`), in a list item or under it; empty where a mapping of fields follows
_DATASET_TYPE = re.compile(r"^([ \t]*)(?:-[ \t]+)?type:[ \t]*([^\s#]*)[^\n]*(?:\n(?P<under>\1[ \t]+\S[^\n]*))?",
                           re.MULTILINE)
# ... an empty `type:` is a user-defined prompt format where the prompt's fields follow under it (`field_instruction:`,
# `format:`); an empty one alone is axolotl's pre-tokenized dataset (input_ids and labels of the user's own making)
_PROMPT_FIELD = re.compile(r"^\s*(?:field_\w+|format|no_input_format|system_format)\s*:")
# axolotl's prompt strategies (src/axolotl/prompt_strategies and prompters), by the name before `.` or `:`
_SFT_FORMATS = ("alpaca", "alpaca_chat", "alpaca_instruct", "alpaca_w_system", "sharegpt", "sharegpt_jokes",
                "chat_template", "chatml", "input_output", "oasst", "gpteacher", "reflection", "explainchoice",
                "concisechoice", "summarizetldr", "jeopardy", "context_qa", "creative_acr", "pygmalion", "metharme",
                "orcamini", "llama2_chat", "user_defined")
_PRETRAIN_FORMATS = ("completion",)
_RL_STAGES = {"dpo": "dpo", "kto": "kto", "orpo": "orpo", "simpo": "simpo", "grpo": "grpo"}


def parse(text: str) -> dict[str, Any]:
    """The axolotl config a model card embeds, as RunConfig keys with why each was said (module docstring), or {}."""
    if "axolotl version" not in text:
        return {}
    version = _VERSION.search(text)
    opened = _FENCE_OPEN.match(text, version.end()) if version else None
    closed = _FENCE_CLOSE.search(text, opened.end()) if opened else None
    if closed is None:
        return {}
    block = text[opened.end():closed.start()]
    try:
        args = parse_flat_yaml(block, "the model card's axolotl config")
    except UnreadableFile:
        return {}  # YAML deeper than axolotl's plain configs: not read rather than read wrong
    scalars = {k: v for k, v in args.items() if not isinstance(v, dict)}
    if not looks_like_axolotl(scalars):
        return {}
    values, why = axolotl_values(scalars), {"method": _method_why(scalars)}
    stage = _stage(args, _datasets_block(block))
    if stage is not None:
        values["stage"], why["stage"] = stage
    for key in ("bf16", "fp16"):
        if values.get(key) is True:
            why[key] = f"'{key}: true'"
    return {"version": version.group(1), "values": values, "why": why}


def _method_why(args: dict) -> str:
    adapter = args.get("adapter")
    if isinstance(adapter, str) and adapter:
        return f"'adapter: {adapter}'" + (", 'load_in_4bit: true'" if args.get("load_in_4bit") is True else "")
    return ("no 'adapter:' key (load_in_4bit and load_in_8bit not true): axolotl trains every weight unless an "
            "adapter is named")


def _datasets_block(block: str) -> str:
    """The lines of the config's top-level `datasets:` key, up to the next top-level key ('' where it has none)."""
    start = re.search(r"^datasets:[ \t]*\r?$", block, re.MULTILINE)
    if start is None:
        return ""
    following = _TOP_KEY.search(block, start.end())
    return block[start.end():following.start() if following else len(block)]


def _stage(args: dict, datasets: str) -> tuple[str, str] | None:
    """(stage, why) the config says of its objective (module docstring), or None."""
    rl = str(args.get("rl") or "").lower()
    if rl:
        return (_RL_STAGES[rl], f"'rl: {rl}'") if rl in _RL_STAGES else None
    if args.get("reward_model") is True:
        return "rm", "'reward_model: true'"
    types = [m.group(2).strip("'\"") or ("" if _PROMPT_FIELD.match(m.group("under") or "") else "pre-tokenized")
             for m in _DATASET_TYPE.finditer(datasets)]
    if not types:
        return ("pt", "'pretraining_dataset:' (axolotl's streamed pre-training)") if args.get("pretraining_dataset") \
            else None
    named = sorted({t or "user-defined (the prompt's fields under type:)" for t in types})
    kinds = {_kind(t) for t in types}
    if kinds == {"sft"}:
        return "sft", f"datasets of type {', '.join(named)}: axolotl's prompt formats, supervised fine-tuning"
    if kinds == {"pt"}:
        return "pt", "datasets of type completion: raw text, axolotl's format for pre-training"
    return None


def _kind(dataset_type: str) -> str | None:
    if not dataset_type:  # `type:` with the prompt's fields under it: a user-defined prompt format
        return "sft"
    name = re.split(r"[.:]", dataset_type, maxsplit=1)[0].lower()
    return "sft" if name in _SFT_FORMATS else "pt" if name in _PRETRAIN_FORMATS else None
