"""The vocabulary of a model the run names but left no config.json for: the published vocabulary of well-known
bases, from the `RunConfig` alone (no file is read). The uniform-guess level ln(vocabulary) depends on it."""
from __future__ import annotations

import re

from ..config import RunConfig

# The vocabulary of well-known base models, by the last part of the name a run gives (each model's published
# config.json `vocab_size`): for an adapter saved without its base's config.json, where the uniform-guess level
# ln(vocabulary) would otherwise be unknown. Sizes within a family that differ by a few hundred tokens (Qwen2.5-7B's
# 152064 against 151936) move that level by under 0.001 nats.
_KNOWN_VOCABULARIES = (
    (re.compile(r"^(?:distil)?gpt2(?:-medium|-large|-xl)?$"), 50257),
    (re.compile(r"^(?:meta-)?llama-3(?:\.\d)?-"), 128256),
    (re.compile(r"^llama-2-"), 32000),
    (re.compile(r"^tinyllama-"), 32000),
    (re.compile(r"^mistral-7b-(?:instruct-)?v0\.[12]$"), 32000),
    (re.compile(r"^qwen(?:1\.5|2|2\.5|3)-"), 151936),
    (re.compile(r"^pythia-"), 50304),
    (re.compile(r"^opt-\d"), 50272),
    (re.compile(r"^phi-2$"), 51200),
    (re.compile(r"^phi-3(?:\.5)?-mini-"), 32064),
    (re.compile(r"^phi-4$"), 100352),  # the 14B; Phi-4-mini's vocabulary is another (200064)
    (re.compile(r"^phi-4-mini-"), 200064),
    (re.compile(r"^smollm2?-\d"), 49152),
    (re.compile(r"^gemma-(?:1\.1-)?(?:2b|7b)"), 256000),
    (re.compile(r"^gemma-2-"), 256000),
    (re.compile(r"^bloomz?-\d"), 250880),  # every BLOOM size (BDH-teacher_Deep_Learning_Audit_code's bloom-560m)
    # T5 v1.0, v1.1 and Flan-T5 share the 32128-row embedding (32100 SentencePiece pieces padded): phbst_T5-ft's
    # adapter names only its local /.../flan-t5-small; mT5 and ByT5 have other vocabularies and are not matched
    (re.compile(r"^(?:flan-)?t5-(?:v1_1-)?(?:small|base|large|xl|xxl|3b|11b)$"), 32128),
)
_BASE_NAME_KEYS = ("adapter.base_model_name_or_path", "model.name_or_path", "model._name_or_path", "card.base_model")


def derive_vocab_size(config: RunConfig) -> None:
    """The vocabulary of a known base model the run names (`_KNOWN_VOCABULARIES`), where no config gave one."""
    if config.get("model.vocab_size") is not None:
        return
    for key in _BASE_NAME_KEYS:
        name = config.get(key)
        last = name.rstrip("/").rsplit("/", 1)[-1].lower() if isinstance(name, str) else ""
        size = next((size for pattern, size in _KNOWN_VOCABULARIES if pattern.search(last)), None)
        if size is not None:
            config.add("model.vocab_size", size, f"the published vocabulary of {name} ({key}, {config.source_of(key)})")
            return
