"""Which kind of network the run trained, where it is not the decoder-only transformer language model the learning-rate
table's main rows are for, and the run's own names for its settings.

`architecture_of(facts)` says "t5" (a T5-family encoder-decoder: T5, mT5, umT5, LongT5, Flan-T5, mT0) or "recurrent"
(an RNN, LSTM or GRU), with what said it; None for everything else, which the decoder-LM rows judge. `own_setting_name`
gives the name the run's own script uses for a RunConfig key (`clip` where the config reads max_grad_norm).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePath

from ..ingest import namespace_args
from .evidence import Facts

# config.json's model_type and the head classes of the T5 family
_T5_TYPES = frozenset({"t5", "mt5", "umt5", "longt5"})
_T5_HEAD = re.compile(r"^(?:M|UM|Long)?T5(?:ForConditionalGeneration|EncoderModel|Model|ForQuestionAnswering)$")
# a T5-family checkpoint in a model or log file name: `google/flan-t5-base`, `mt5-base-finetuned-ar-to-en`, `t5-small`,
# `google/t5-v1_1-base`, `bigscience/mt0-large` (Wenxin-Jiang's mT5 model card, 1025378573_T5-Finetune). A bare `t5`
# must be followed by a size or version: `run_t5.log` names an experiment, not a checkpoint, and `t5x` is a framework;
# not `gpt5`, `qwen2.5-t5x`
_T5_SIZE = r"(?:small|base|large|xl|xxl|3b|11b|v1[-_.]1)"
_T5_NAME = re.compile(r"(?<![a-z0-9])(?:(?:flan[-_]?|m|um|by|long)t5|t5[-_.]?" + _T5_SIZE + r"|mt0)(?![a-z0-9])",
                      re.IGNORECASE)
_MODEL_NAME_KEYS = ("model.name_or_path", "model._name_or_path", "adapter.base_model_name_or_path")
# a script's own argument naming a recurrent cell (pytorch/examples' word_language_model: model='LSTM', 'RNN_RELU')
_RECURRENT_ARGS = ("model", "rnn_type", "cell", "cell_type", "arch")
_RECURRENT = re.compile(r"^(?:RNN(?:_TANH|_RELU)?|LSTM|GRU|QRNN)$", re.IGNORECASE)


@dataclass(frozen=True)
class Architecture:
    kind: str  # "t5" or "recurrent"
    said: str  # what said it, for evidence


def architecture_of(facts: Facts) -> Architecture | None:
    """The run's network where it is a T5-family encoder-decoder or a recurrent one (`Architecture`), else None."""
    return _t5_said(facts) or _recurrent_said(facts)


def _t5_said(facts: Facts) -> Architecture | None:
    config = facts.config
    model_type = config.get("model.model_type")
    if isinstance(model_type, str) and model_type.lower() in _T5_TYPES:
        return Architecture("t5", f"model_type {model_type!r} ({config.source_of('model.model_type')})")
    heads = config.get("model.architectures")
    head = next((h for h in heads if isinstance(h, str) and _T5_HEAD.match(h)), None) \
        if isinstance(heads, list) else None
    if head is not None:
        return Architecture("t5", f"{head} ({config.source_of('model.architectures')})")
    named = next(((name, where) for name, where in _model_names(facts) if _T5_NAME.search(name)), None)
    return Architecture("t5", f"{named[1]}: {named[0]}") if named is not None else None


def _model_names(facts: Facts):
    """(name, where) of the model's names in the config, then of the log files: a file's name is read only where the
    config named no T5 (the timeline's sources are listed once, and only then)."""
    for key in _MODEL_NAME_KEYS:
        name = facts.config.get(key)
        if isinstance(name, str):
            yield name, f"{key} ({facts.config.source_of(key)})"
    frame = facts.timeline.frame
    if "source" in frame:
        for source in frame["source"].dropna().astype(str).unique():
            yield PurePath(source).name, "a log file's name"


def _recurrent_said(facts: Facts) -> Architecture | None:
    args = script_arguments(facts)
    return next((Architecture("recurrent", f"{k}={args[k]!r} (console log's argparse Namespace line)")
                 for k in _RECURRENT_ARGS if isinstance(args.get(k), str) and _RECURRENT.match(args[k])), None)


def script_arguments(facts: Facts) -> dict:
    """The arguments a script printed as an argparse Namespace line ({} where it printed none)."""
    text = facts.timeline.texts.get(namespace_args.TEXT_KEY)
    try:
        args = json.loads(text) if text else {}
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def own_setting_name(facts: Facts, key: str) -> str | None:
    """The script's own argument name for the RunConfig `key`, where the value came from its argparse Namespace line
    and the name differs from the key (ohalon's RNN: `clip`, which the config reads as max_grad_norm); else None."""
    if "argparse Namespace" not in str(facts.config.source_of(key)):
        return None
    name = namespace_args.own_name(script_arguments(facts), key)
    return name if name != key else None
