"""The setup facts a console log states (`ingest.console_facts`, kept in the timeline's meta) that fill a run's
configuration where no file said them (`read_console_facts`, for `run_config.read_run_config`): precision, model size,
vocabulary, gradient accumulation, a 4-bit base, framework, method, the TRL trainer, the oldest transformers release,
a model card's base model.
"""
from __future__ import annotations

import re

from ..config import CONSOLE_ACCUMULATION, RunConfig
from ..timeline import Timeline


def _about_the_trained_model(config: RunConfig, meta: dict) -> bool:
    """Whether a precision line that names a model type (Unsloth's `Using float16 precision for gemma3 won't work!`)
    is about the model the run trained, as far as its name tells (a notebook may try one model and train another)."""
    kind, name = meta.get("console_precision_model"), config.get("model.name_or_path")
    if not isinstance(kind, str) or not isinstance(name, str):
        return True
    return _squeezed(kind) in _squeezed(name)


def _squeezed(text: str) -> str:
    """Lower case letters and digits only: `gemma3` is in `unsloth/gemma-3-270m-it` so."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def read_console_facts(config: RunConfig, timeline: Timeline) -> None:
    """Precision, model size, the gradient accumulation, a 4-bit base, the framework and method a recipe's start says,
    the TRL trainer whose module warned (as `trainer_class`) and the oldest transformers release its messages allow
    (as `transformers_at_least`), that a console log states (`ingest.stdout.console_facts`), where nothing else did;
    fp32 is said as fp16 and bf16 both off."""
    for source, meta in timeline.meta.items():
        precision = meta.get("console_precision") if _about_the_trained_model(config, meta) else None
        said = f"{source}: {meta.get('console_precision_line', '')}"
        if precision == "fp32" and config.get("fp16") is None and config.get("bf16") is None:
            config.add("fp16", False, said)
            config.add("bf16", False, said)
        elif precision in ("bf16", "fp16") and config.get(precision) is None:
            config.add(precision, True, said)
        for ours, theirs in (("n_params", "console_n_params"), ("model.vocab_size", "console_vocab_size"),
                             (CONSOLE_ACCUMULATION, "console_accumulation")):
            if isinstance(meta.get(theirs), int) and config.get(ours) is None:
                config.add(ours, meta[theirs], f"{source}: {meta.get(theirs + '_line', '')}")
        said = f"{source}: {meta.get('console_framework_line', '')}"
        if meta.get("console_framework") and config.get("_framework") is None:
            config.add("_framework", meta["console_framework"], said)
        if meta.get("console_method") and config.get("method") is None:
            line = meta.get("console_method_line")
            config.add("method", meta["console_method"], f"{source}: {line}" if line else said)
        at_least = meta.get("console_transformers_at_least")  # a deprecation message dates the release
        if at_least and config.get("transformers_at_least") is None:
            config.add("transformers_at_least", at_least, f"{source}: {meta['console_transformers_at_least_line']}")
        card_base = meta.get("card_base")  # a model card's "fine-tuned version of [X]": the model's _name_or_path
        if card_base and config.get("card.base_model") is None:
            config.add("card.base_model", card_base, f"{source}: the model card's 'fine-tuned version of' line")
        trl = meta.get("console_trl_trainer")
        if trl and config.get("trainer_class") is None and config.get("training_args_class") is None:
            config.add("trainer_class", f"trl.{trl}", f"{source}: {meta.get('console_trl_trainer_line', '')}")
        four_bit = meta.get("console_4bit")
        # the base loaded in 4 bits: an adapter on it is QLoRA
        if four_bit and config.get("quant.load_in_4bit") is None:
            config.add("quant.load_in_4bit", True, f"{source}: {four_bit}")
        elif four_bit and meta.get("console_4bit_layers") and config.get("quant.load_in_4bit") is False:
            # bitsandbytes' 4-bit layers ran in this process: a saved flag that says otherwise is not what was loaded
            config.put_first("quant.load_in_4bit", True, f"{source}: {four_bit}")
