"""An experiment tracker's copy of a run's configuration (W&B config, MLflow params) as RunConfig keys.

The HF Trainer gives both trackers one flat dict: the model config's keys, then the
TrainingArguments' (which win on a clash), `model/num_parameters` (W&B) and, for a PEFT model,
`peft_config` (W&B: {adapter name: LoraConfig fields}); a W&B config of HF's without one says
the whole model was trained (`derived_method`: "full"). nanoGPT's train.py logs its own globals:
its `dtype` gives fp16 / bf16, and `init_from: scratch` a model trained whole from random
weights. W&B keeps the values as JSON; MLflow as
the `str()` of each value (`"0.003"`, `"False"`, `"None"`, `"['wandb']"`), read back with
`ast.literal_eval`, which builds literals only and runs nothing. Other frameworks log their own
keys; the ones named like TrainingArguments (`learning_rate`, `max_grad_norm`, `bf16`, ...) are
read the same way, the rest are kept under their own names.
"""
from __future__ import annotations

import ast
from typing import Any

from .config_files import model_config_values, training_args_values
from .console_lines.nanogpt import NANOGPT_DTYPES
from .namespace_args import built_from_sizes

# Keys of a transformers model config (PretrainedConfig.to_dict) that the HF callbacks mix into
# the same dict as the TrainingArguments: read as `model.<key>`, as config.json would be.
MODEL_KEYS = frozenset({
    "model_type", "architectures", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "intermediate_size", "max_position_embeddings", "tie_word_embeddings", "torch_dtype",
    "dtype", "quantization_config", "_name_or_path", "transformers_version", "use_cache", "_attn_implementation",
    "head_dim", "attention_bias", "mlp_bias", "rope_theta", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon",
    "hidden_act", "initializer_range", "n_layer", "n_embd", "n_head", "n_inner", "n_positions", "d_model", "num_layers",
    "text_config", "sliding_window", "rope_scaling", "attention_dropout", "id2label", "label2id", "num_labels",
    # ChatGLM / GLM-4 (THUDM's configuration_chatglm.py) spell their sizes their own way
    "ffn_hidden_size", "inner_hidden_size", "multi_query_attention", "multi_query_group_num", "padded_vocab_size",
    "kv_channels",
})
_LONGEST_LITERAL = 8000  # MLflow's param limit; a longer string is not a value HF logged


def tracker_config_values(config: dict[str, Any], values_are_text: bool = False) -> dict[str, Any]:
    """RunConfig keys -> values of a tracker's config dict (MLflow params: `values_are_text=True`).

    >>> tracker_config_values({"learning_rate": "0.003", "bf16": "False", "hidden_size": "32"}, values_are_text=True)
    {'model.hidden_size': 32, 'learning_rate': 0.003, 'bf16': False}
    """
    if values_are_text:
        config = literal_values(config)
    model = {k: v for k, v in config.items() if k in MODEL_KEYS and v is not None}  # None: set when saved
    args = {k: v for k, v in config.items() if k not in MODEL_KEYS and k not in ("peft_config", "model/num_parameters")}
    out = model_config_values(model) if model else {}
    out.update(training_args_values(args))
    if isinstance(config.get("model/num_parameters"), int) and config["model/num_parameters"] > 0:
        out["n_params"] = config["model/num_parameters"]
    out.update(_adapter_values(config.get("peft_config")))
    if _is_nanogpt_config(config):
        out.update(NANOGPT_DTYPES.get(str(config["dtype"]), {}))
    job = openai_job_method(config)
    if job:
        out["openai_job.method"] = job
    sizes = built_from_sizes(config)
    if sizes:  # a hand-written script's arguments logged as the config (`wandb.init(config=vars(args))`), as argparse
        out["model.built_from_sizes"] = sizes  # prints them: the model's sizes and no weights to start from
    return out


# Flags of LLaVA-style multimodal trainers (LLaVA, Valley, XTuner's LLaVA) that freeze the language model: only the
# projector (or another small part) trains, which is neither full fine-tuning nor an adapter the config names.
FROZEN_LANGUAGE_MODEL = ("freeze_backbone", "tune_mm_mlp_adapter", "freeze_llm")


def derived_method(config: dict[str, Any]) -> tuple[str, str] | None:
    """(method, why) where the tracker's config says how much of the model was trained, else None (also where it
    freezes the language model: `FROZEN_LANGUAGE_MODEL`)."""
    if any(config.get(flag) is True for flag in FROZEN_LANGUAGE_MODEL):
        return None
    if "model/num_parameters" in config and "learning_rate" in config and "peft_config" not in config:
        return "full", "has no peft_config, which HF's WandbCallback logs for every PEFT model"
    if _is_nanogpt_config(config) and config.get("init_from") == "scratch":
        return "full", "sets nanoGPT's init_from to scratch: every weight starts random and is trained"
    return None


# nanoGPT's train.py logs its globals as the W&B config; its `dtype` is the autocast dtype (float16 with a
# GradScaler), not a model's storage dtype as in an HF config.
_NANOGPT_KEYS = ("init_from", "block_size", "dtype")


def _is_nanogpt_config(config: dict[str, Any]) -> bool:
    return all(key in config for key in _NANOGPT_KEYS)


def openai_job_method(config: dict[str, Any]) -> str | None:
    """The training method of an OpenAI fine-tuning job whose record is the config (`openai wandb sync` logs the job
    object itself: mdarshad1000_Fine-Tuning-GPTs, sinanuozdemir_oreilly-hands-on-gpt-llm), else None. The legacy
    `fine-tune` object (prompt / completion pairs, `hyperparams.prompt_loss_weight`) had no method but supervised;
    a `fine_tuning.job` names its method (`supervised`, `dpo`, `reinforcement`), supervised where it names none."""
    kind, hyperparams = config.get("object"), config.get("hyperparams")
    if kind == "fine-tune" and isinstance(hyperparams, dict) and "prompt_loss_weight" in hyperparams:
        return "supervised"
    if kind == "fine_tuning.job" and isinstance(config.get("model"), str):
        method = config.get("method")
        said = method.get("type") if isinstance(method, dict) else None
        return said if isinstance(said, str) else "supervised"
    return None


def literal_values(config: dict[str, Any]) -> dict[str, Any]:
    """MLflow params (every value str()-ed) with each value read back (`literal`)."""
    return {key: literal(value) for key, value in config.items()}


def literal(text: Any) -> Any:
    """A str()-ed Python value back as the value (numbers, booleans, None, lists, dicts); other text as it is.

    >>> [literal(t) for t in ("0.003", "False", "None", "['wandb', 'mlflow']", "linear")]
    [0.003, False, None, ['wandb', 'mlflow'], 'linear']
    """
    if not isinstance(text, str) or len(text) > _LONGEST_LITERAL:
        return text
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _adapter_values(peft_config: Any) -> dict[str, Any]:
    """W&B's `peft_config` ({adapter name: its fields}) as `adapter.<key>`, like adapter_config.json."""
    if not isinstance(peft_config, dict) or not peft_config:
        return {}
    first = next(iter(peft_config.values()))
    fields = first if isinstance(first, dict) else peft_config
    if "peft_type" not in fields and "r" not in fields:
        return {}
    return {f"adapter.{k}": v for k, v in fields.items() if not isinstance(v, dict)}
