"""A model card (README.md beside an adapter or a trained model) as `RunConfig` keys: PEFT's bitsandbytes block as
`quant.<key>`, the framework its header's tags name, the base model its header names, the training's precision and a
from-scratch start its prose states. Its header's lines and tags serve the Trainer's card reader too (`trainer_card`).
"""
from __future__ import annotations

import re
from typing import Any

from .flat_yaml import yaml_scalar
from .readme_objective import language_modelling_said
from .readme_precision import precision_stated
from .readme_scratch import trained_from_scratch

# PEFT's model card (README.md beside the adapter, PEFT 0.3-0.6) lists the base model's bitsandbytes settings:
# "The following `bitsandbytes` quantization config was used during training:" then "- load_in_4bit: True" lines.
_CARD_QUANT = "quantization config was used during training:"
_CARD_ITEM = re.compile(r"^- (\w+): (\S+)\s*$")


# LLaMA-Factory tags the model card it writes `llama-factory` and its finetuning type (`create_modelcard_and_push`):
# a tag of the card's YAML header, between its `---` lines. TRL's trainers tag theirs `trl` and the trainer's own
# tag (`_tag_names = ["trl", "sft"]`), Unsloth's `unsloth` besides. In this order where a card has several: LLaMA-
# Factory's DPO/KTO stages and Unsloth's trainers are TRL's trainers underneath, and their cards carry its tags too.
_CARD_TAGGERS = {"llama-factory": "llamafactory", "unsloth": "unsloth", "trl": "trl"}
_CARD_TAG = re.compile(r"^[ \t]*- ([\w.-]+)[ \t]*$")


def read_model_card(path) -> dict[str, Any]:
    """A model card's quantization block as `quant.<key>`, `card.tagged_by` where its header's tags name the
    framework that wrote it, `precision.readme` (with `precision.readme_words`) where it states the training's
    precision in so many words (`readme_precision`), `model.readme_from_scratch` where it says its model was
    trained from scratch (`readme_scratch`), and `model.readme_lm_objective` where it says its model is trained on
    next-token prediction (`readme_objective`) ({} where the card has none: a README is not a config)."""
    with open(path, "rb") as fh:  # an OSError is the caller's to report, as for every config file
        text = fh.read(_CARD_BYTES).decode("utf-8", errors="replace")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith(_CARD_QUANT)), None)
    out: dict[str, Any] = {}
    stated = precision_stated(text)
    if stated:
        out["precision.readme"], out["precision.readme_words"] = stated
    out.update({key: said for key, said in (("model.readme_from_scratch", trained_from_scratch(text)),
                                            ("model.readme_lm_objective", language_modelling_said(text)),
                                            ("card.tagged_by", _card_tagger(lines)),
                                            ("card.base_model", _card_base_model(lines))) if said})
    for line in lines[start + 1:] if start is not None else []:
        m = _CARD_ITEM.match(line.strip())
        if m is None:
            break
        value = m.group(2)  # written by Python: None, True, 6.0, fp4
        out[f"quant.{m.group(1)}"] = None if value == "None" else yaml_scalar(value)
    return out


_CARD_BYTES = 1 << 20  # a model card's quantization block sits near its top


def card_header(lines: list[str]) -> list[str]:
    """The lines of a model card's YAML header, between its `---` lines ([] where it has none)."""
    if not lines or lines[0].strip() != "---":
        return []
    return next((lines[1:i] for i in range(1, len(lines)) if lines[i].strip() == "---"), [])


# PEFT's and TRL's cards name the base in their header (`base_model: HuggingFaceTB/SmolLM2-360M`, or a list whose first
# item is taken), also where adapter_config.json's base_model_name_or_path was saved as null.
_CARD_BASE = re.compile(r"^base_model:[ \t]*['\"]?([\w.\-/]*)['\"]?[ \t]*$")
_CARD_LIST_ITEM = re.compile(r"^[ \t]*- ['\"]?([\w.\-/]+)['\"]?[ \t]*$")


def _card_base_model(lines: list[str]) -> str | None:
    """The base model a model card's YAML header names, or None."""
    header = card_header(lines)
    for i, line in enumerate(header):
        m = _CARD_BASE.match(line.rstrip())
        if m and m.group(1):
            return m.group(1)
        if m and i + 1 < len(header) and (item := _CARD_LIST_ITEM.match(header[i + 1])):
            return item.group(1)
    return None


def _card_tagger(lines: list[str]) -> str | None:
    """The framework a model card's YAML header tags it with (`tags:` then `- llama-factory` lines), or None."""
    tags = card_tags(lines)
    return next((framework for tag, framework in _CARD_TAGGERS.items() if tag in tags), None)


def card_tags(lines: list[str]) -> set[str]:
    """The tags of a model card's YAML header (`tags:` then `- generated_from_trainer` lines), lower case."""
    in_tags, tags = False, set()
    for line in card_header(lines):
        if not line.startswith((" ", "\t", "-")):
            in_tags = line.strip() == "tags:"
        elif in_tags and (m := _CARD_TAG.match(line)):
            tags.add(m.group(1).lower())
    return tags
