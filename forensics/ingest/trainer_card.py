"""What the model card transformers writes for a run says of the model it trained (`trainer_card_facts`): the
Transformers release under its `### Framework versions` heading, any line naming an adapter, the model it was
fine-tuned from (or that it was trained from scratch), its model-index name, task types, tags and datasets.

The Trainer's card (`Trainer.create_model_card`, tag `generated_from_trainer`) and the Keras callback's
(`PushToHubCallback`, tag `generated_from_keras_callback`) are written by transformers' modelcard.py `to_model_card`:
"This model is a fine-tuned version of [X](https://huggingface.co/X) on ..." where the model came from a named
checkpoint, "This model was trained from scratch on ..." where not, then the `- Transformers 4.12.5` line. PEFT's
`save_pretrained` adds `library_name: peft` and a `- PEFT 0.x` line to the card of an adapter (PEFT PR #594, 0.4).
"""
from __future__ import annotations

import re

from .model_card import card_header, card_tags
from .readme_objective import language_modelling_said

# `- Transformers 4.12.5` (the Trainer's and Keras' cards), `- Transformers: 4.50.0` (TRL's)
_TRANSFORMERS_LINE = re.compile(r"^- Transformers:? (\d+\.\d+(?:\.\d+)?\S*)\s*$", re.MULTILINE)
# A card line naming an adapter: PEFT's own marks (`library_name: peft`, `- PEFT 0.7.1`), a LoRA, AdapterHub's
# adapter-transformers / adapters, prompt or prefix tuning, IA3. Whole words: `adaptation` and `Flora` are no adapter.
_ADAPTER_WORD = re.compile(r"(?<![A-Za-z])(?:peft|q?lora|q?dora|adapters?|adapter-transformers|ia3|p-tuning|"
                           r"(?:prefix|prompt)[-_ ]tuning)(?![A-Za-z])", re.IGNORECASE)
_FINETUNED_FROM = re.compile(r"fine-tuned version of \[([^\]\n]*)\]\(https://huggingface\.co/([^)\s]*)\)")
_FROM_SCRATCH = re.compile(r"^This model was trained from scratch on .*$", re.MULTILINE)
_ON_DATASET = re.compile(r"fine-tuned version of \[[^\]\n]*\]\([^)\n]*\) on (?:the |an? )?([^\n]*?)(?: datasets?)?\.?$",
                         re.MULTILINE)
_INDEX_NAME = re.compile(r"^- name: (\S[^\n]*?)\s*$")
_TYPE = re.compile(r"^\s*type: (\S+)\s*$")
_DATASET_ITEM = re.compile(r"^\s*- (\S+)\s*$")


def trainer_card_facts(text: str) -> dict:
    """`card_transformers` (the release the card names), `card_adapter_named` (the first line naming an adapter),
    `card_base` (the checkpoint it was fine-tuned from) or `card_from_scratch` (the line saying it was not),
    `card_model_name`, `card_task_types`, `card_tags` and `card_datasets` of a Trainer's or Keras callback's card, and
    `card_lm_objective` where its prose says the model is trained on next-token prediction (`readme_objective`)."""
    lines = text.splitlines()
    header = card_header(lines)
    out: dict = {"card_tags": tuple(sorted(card_tags(lines))), "card_task_types": _task_types(header),
                 "card_datasets": _datasets(header, text)}
    version = _TRANSFORMERS_LINE.search(text)
    if version:
        out["card_transformers"] = version.group(1)
    adapter = next((line.strip() for line in lines if _ADAPTER_WORD.search(line)), None)
    if adapter:
        out["card_adapter_named"] = adapter[:160]
    base = _FINETUNED_FROM.search(text)
    if base:
        out["card_base"] = base.group(2) or base.group(1)
    elif (scratch := _FROM_SCRATCH.search(text)) is not None:
        out["card_from_scratch"] = scratch.group(0).strip()
    name = next((m.group(1) for line in header if (m := _INDEX_NAME.match(line))), None)
    if name:
        out["card_model_name"] = name
    language_modelling = language_modelling_said(text)
    if language_modelling:
        out["card_lm_objective"] = language_modelling
    return out


def _task_types(header: list[str]) -> tuple[str, ...]:
    """The `type:` of each `task:` block of the model-index (`text2text-generation`, `summarization`, ...)."""
    types = []
    for i, line in enumerate(header):
        if line.strip().lstrip("- ") == "task:":
            found = next((m.group(1) for nxt in header[i + 1:i + 4] if (m := _TYPE.match(nxt))), None)
            if found:
                types.append(found.lower())
    return tuple(dict.fromkeys(types))


def _datasets(header: list[str], text: str) -> tuple[str, ...]:
    """The header's `datasets:` list, and what the card's prose says it was fine-tuned on (`the wmt16 dataset`)."""
    found, in_list = [], False
    for line in header:
        if not line.startswith((" ", "\t", "-")):
            in_list = line.strip() == "datasets:"
        elif in_list and (m := _DATASET_ITEM.match(line)):
            found.append(m.group(1))
    prose = _ON_DATASET.search(text)
    if prose and not prose.group(1).startswith(("unknown", "None")):
        found.append(prose.group(1))
    return tuple(dict.fromkeys(found))
