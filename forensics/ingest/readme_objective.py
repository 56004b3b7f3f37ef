"""A README (a project's or a model card's) that says in so many words that its model is trained on the language-model
objective, next-token prediction over plain text: "trained on normal M365 audit log sequences using next-token
prediction" (Lukas1121_LogSentinel), "learning to predict the next word given a context sequence" (JoncyKeda's word
LSTM), "GPT-2 Fine-Tuning — Next Word Prediction" (Cosmox999's GPT-2 on WikiText-2: continued pre-training), "This
casual language model was trained from scratch on CNN/Dailymail" (saranscript's reformer-clm card).

Prose is the weakest evidence a run has, so only such phrases count, never "language model" alone (an instruction-tuned
model is one too), and not a sentence that negates, offers or compares it (`readme_prose.hedged`), nor one that puts
other losses or tasks beside it ("auxiliary losses beyond next-token prediction": a task's loss with the LM term in
it), nor a README that names a supervised task, a dialogue or an alignment stage anywhere in a sentence that tells it
(an instruction-tuned chat model is trained by next-token prediction on its answers: which one the log is, it does
not say). HTML comments are left out first.
"""
from __future__ import annotations

import re

from .readme_prose import hedged, sentence_around, without_comments

_UNIT = r"(?:token|word|char(?:acter)?)"
_LM_OBJECTIVE = re.compile(
    rf"(?i)\bnext[- ]?{_UNIT}s?[- ]prediction\b|\bpredict(?:s|ing)?\s+the\s+next\s+{_UNIT}\b|"
    # the objective's name, not the kind of model ("we fine-tune a causal language model on our emails to answer
    # them" names what the model is); "casual": the reformer-clm card's own spelling
    r"\bca(?:us|su)al[- ]language[- ]modell?ing\b|"
    r"\blanguage[- ]model\b[^.\n]{0,40}?\b(?:built|trained|pre-?trained)\s+from[ -]scratch\b")
# a supervised task, a dialogue model or an alignment stage: the README's model is (also) trained to one
_TASK = re.compile(
    r"(?i)\b(?:instruct\w*|chat|chatbots?|conversation\w*|dialog\w*|question[- ]answer\w*|"
    r"questions? and answers?|Q&A|QA|SFT|supervised|(?:prompt|input)[- /]+(?:response|completion|output|target)s?|"
    r"summari[sz]\w*|translat\w*|classif\w*|sentiment|RLHF|DPO|PPO|GRPO|ORPO|KTO|reward\w*|preferences?|alignment)\b")
# in the phrase's sentence: other losses beside the LM term (a task's objective that includes next-token prediction),
# or tasks the model learns through it ("learns symbolic sequence tasks through causal language modeling": a loss on
# each task's output tokens after its prompt, parisainthestars_adaptive-sparse-language-model)
_BESIDE = re.compile(r"(?i)\b(?:beyond|besides|auxiliary|alongside|plus|in addition|tasks)\b")


def language_modelling_said(text: str) -> str | None:
    """The README's words that say its model is trained on next-token prediction over plain text, else None."""
    text = without_comments(text)
    if any(not hedged(text, m.start(), m.end()) for m in _TASK.finditer(text)):
        return None
    prose = _YAML_HEADER.sub("", text, count=1)
    return next((m.group(0) for m in _LM_OBJECTIVE.finditer(prose) if _tells_it(prose, m)), None)


# A model card's YAML header: transformers' Trainer names its model-index task from the model's class (any causal LM
# gets `name: Causal Language Modeling`, an instruction or math fine-tune too), so it says nothing of the objective;
# its tags still count as task words above (TRL's `- sft`)
_YAML_HEADER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*$", re.S | re.M)


def _tells_it(text: str, m: re.Match) -> bool:
    """Whether the sentence of the match tells the objective: not hedged, no other loss or tasks put beside it."""
    before, after = sentence_around(text, m.start(), m.end())
    return not hedged(text, m.start(), m.end()) and _BESIDE.search(before + after) is None
