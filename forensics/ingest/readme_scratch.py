"""A README (a project's or a model card's) that says in so many words that its model was trained from scratch:
"The model is trained from scratch" (biyamuslim_ML-Based-Python-Code-Summarizer), "train model from scratch"
(LZHMS_TransformerPractice), "# Start training from scratch" (ruapotato_NullRoot). Random weights are trained whole:
an adapter on them would learn nothing.

Not the Trainer's own model card sentence "This model was trained from scratch on the X dataset", which it writes
wherever it does not know the base's name (Seanaaa0_GPT-CoT, a QLoRA), nor code written from scratch ("training loop
from scratch", "implemented from scratch"), nor a README that names an adapter anywhere (a model pre-trained from
scratch, then tuned with LoRA), nor a sentence that negates, compares or offers it ("not trained from scratch",
"far cheaper than training from scratch", "You can train from scratch with --init scratch": `readme_prose.hedged`),
nor a part trained from scratch ("The tokenizer was trained from scratch", "Only the classification head is ..."), nor a
README that names a fine-tune, continued pre-training or a base model anywhere (a run that starts from trained weights
says so; a from-scratch part beside it is not the model). HTML comments are left out first.
"""
from __future__ import annotations

import re

from .readme_prose import hedged, sentence_around, without_comments

_CODE_WORDS = r"\b(?:loop|code|implement\w*|pipeline|script|framework)\b"  # code written from scratch, not weights
_SCRATCH = re.compile(r"(?i)\b(?:trained|training|train|pre-?trained|pre-?training|pretrain)\b"
                      rf"(?:(?!{_CODE_WORDS})[^.\n]){{0,40}}?\bfrom[ -]scratch\b")
_CARD_SENTENCE = re.compile(r"(?i)\bThis model (?:was|is) trained from scratch on\b[^\n]*")
_ADAPTER = re.compile(r"(?i)\b(?:q?lora|peft|adapters?|prefix[ -]tuning|p-tuning|prompt[ -]tuning)\b")
_TRAINED_START = re.compile(r"(?i)\bfine[ -]?tun\w*|\bcontinued[ -]pre-?train\w*|\bbase[ _-]model\b")
# a part of the model, not its weights: a tokenizer, a vocabulary, a head or the embeddings trained from scratch
_CLAUSE_BREAK = re.compile(r"(?i)[,;:—]|\band\b")
_PART = re.compile(r"(?i)\b(?:tokeni[sz]ers?|bpe|vocab\w*|heads?|embeddings?|classifiers?)\b")


def trained_from_scratch(text: str) -> str | None:
    """The README's words that say its model was trained from scratch, else None."""
    text = _CARD_SENTENCE.sub("", without_comments(text))
    if _ADAPTER.search(text) or any(not hedged(text, m.start(), m.end()) for m in _TRAINED_START.finditer(text)):
        return None  # (a fine-tune denied is none: "not a fine-tune of NLLB", netra-ai-lab_Netra-NMT)
    return next((m.group(0) for m in _SCRATCH.finditer(text) if _says_the_model(text, m)), None)


def _says_the_model(text: str, m: re.Match) -> bool:
    """Whether the sentence of the match tells the model was trained from scratch: not hedged, not of a part of it."""
    before, _ = sentence_around(text, m.start(), m.end())
    clause = _CLAUSE_BREAK.split(before)[-1]  # the subject of "trained": "the tokenizer ... and the weights are" names
    return not hedged(text, m.start(), m.end()) and _PART.search(clause + m.group(0)) is None
