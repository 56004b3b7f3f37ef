"""A README (a project's or a model card's) that says in so many words that its model was trained from scratch:
"The model is trained from scratch" (biyamuslim_ML-Based-Python-Code-Summarizer), "train model from scratch"
(LZHMS_TransformerPractice), "# Start training from scratch" (ruapotato_NullRoot). Random weights are trained whole:
an adapter on them would learn nothing.

Not the Trainer's own model card sentence "This model was trained from scratch on the X dataset", which it writes
wherever it does not know the base's name (Seanaaa0_GPT-CoT, a QLoRA), nor code written from scratch ("training loop
from scratch", "implemented from scratch"), nor a README that names an adapter anywhere (a model pre-trained from
scratch, then tuned with LoRA). HTML comments are left out first.
"""
from __future__ import annotations

import re

_CODE_WORDS = r"\b(?:loop|code|implement\w*|pipeline|script|framework)\b"  # code written from scratch, not weights
_SCRATCH = re.compile(r"(?i)\b(?:trained|training|train|pre-?trained|pre-?training|pretrain)\b"
                      rf"(?:(?!{_CODE_WORDS})[^.\n]){{0,40}}?\bfrom[ -]scratch\b")
_CARD_SENTENCE = re.compile(r"(?i)\bThis model (?:was|is) trained from scratch on\b[^\n]*")
_ADAPTER = re.compile(r"(?i)\b(?:q?lora|peft|adapters?|prefix[ -]tuning|p-tuning|prompt[ -]tuning)\b")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def trained_from_scratch(text: str) -> str | None:
    """The README's words that say its model was trained from scratch, else None."""
    text = _CARD_SENTENCE.sub("", _COMMENT.sub("", text))
    if _ADAPTER.search(text):
        return None
    m = _SCRATCH.search(text)
    return None if m is None else m.group(0)
