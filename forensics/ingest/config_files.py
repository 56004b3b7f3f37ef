"""Readers of a run's configuration files, each returning flat `RunConfig` keys -> values.

Key names (see `forensics.config.RunConfig`): TrainingArguments names as they are
(`learning_rate`, `max_grad_norm`, `fp16`, ...), `ds.<dotted>` for DeepSpeed, `model.<key>`
for config.json, `quant.<key>` for its quantization_config, `adapter.<key>` for
adapter_config.json, `method` where a framework names it ("full", "lora", "qlora"), and
`state.<key>` for counters saved beside a checkpoint (loss scale, skipped steps).

Every reader raises UnreadableFile (never a json/pickle error) on bad input. Nothing here
executes code: torch-pickled files go through the inert unpickler in `training_args`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from ._config_keys import deepspeed_values, is_number
from ._jsonfile import read_json_object
from ..torchpickle import safe_unpickle_torch_file
from . import megatron_args, namespace_args
from .config_precision import flags_off, precision_keyed, training_pairs
from .flat_yaml import read_flat_yaml, yaml_leaves, yaml_scalar, yaml_sectioned_values
from .framework_configs import (axolotl_values, h2o_llmstudio_values, lightning_values, llamafactory_values,
                                looks_like_axolotl, swift_values, torchtune_values)
from .readme_objective import language_modelling_said
from .readme_precision import precision_stated
from .readme_scratch import trained_from_scratch
from .training_args import read_training_args

# config.json keys that other architectures spell differently (GPT-2: n_layer, n_embd).
_MODEL_ALIASES = {"n_layer": "num_hidden_layers", "num_layers": "num_hidden_layers", "n_embd": "hidden_size",
                  "d_model": "hidden_size", "n_head": "num_attention_heads", "n_inner": "intermediate_size",
                  # ChatGLM / GLM-4 (THUDM's configuration_chatglm.py)
                  "ffn_hidden_size": "intermediate_size", "multi_query_group_num": "num_key_value_heads",
                  "padded_vocab_size": "vocab_size", "inner_hidden_size": "intermediate_size"}


# --- Hugging Face: training_args.bin, config.json, adapter_config.json -----------------------

def training_args_values(args: dict) -> dict[str, Any]:
    """TrainingArguments fields (private ones left out) plus the resolved DeepSpeed config it holds, and the
    arguments' class as `training_args_class` where the file names it (a pickle's `__class__`)."""
    # Private fields are runtime state; `*_token` fields are secrets (HF masks them in the TB text too).
    out = {k: _without_class(v) for k, v in args.items()
           if not k.startswith("_") and not k.endswith("_token")
           and k not in ("hf_deepspeed_config", "deepspeed_plugin")}
    ds = args.get("hf_deepspeed_config")
    if isinstance(ds, dict) and isinstance(ds.get("config"), dict):
        out.update(deepspeed_values(ds["config"]))
    if isinstance(args.get("deepspeed"), dict):
        out.update(deepspeed_values(args["deepspeed"]))
    for flag in ("fp16", "bf16"):
        if isinstance(out.get(flag), dict):  # a DeepSpeed-style section given as the flag: `"fp16": {"enabled": true}`
            enabled = _enabled(out.pop(flag))
            if enabled is not None:
                out[flag] = enabled
    if "_n_gpu" in args:
        out["n_gpu"] = args["_n_gpu"]
    if isinstance(args.get("__class__"), str):  # training_args.bin: TRL's SFTConfig, GRPOConfig, Unsloth's ...
        out["training_args_class"] = args["__class__"]
    if str(args.get("__class__", "")).startswith("swift."):  # ms-swift's printed arguments: its own tuner names
        out.update(swift_values(args))
    return out


def _enabled(section: dict) -> bool | None:
    """A `{"enabled": true}` section's switch (`"auto"` or none: None, not said). The Trainer reads any non-empty dict
    as on, but whoever wrote `{"enabled": false}` meant off; the section's own word is taken."""
    enabled = section.get("enabled")
    return enabled if isinstance(enabled, bool) else None


def _without_class(value: Any) -> Any:
    """A pickled object's fields without the `__class__` name, so it compares equal to its JSON form."""
    if isinstance(value, dict):
        return {k: _without_class(v) for k, v in value.items() if k != "__class__"}
    return value


def read_training_args_values(path) -> dict[str, Any]:
    """`training_args.bin` as RunConfig keys (see `training_args_values`)."""
    return training_args_values(read_training_args(path))


def model_config_values(config: dict) -> dict[str, Any]:
    """config.json as `model.<key>` (scalars and short lists, `model.num_labels` from id2label, a composite
    encoder-decoder's `model.parts_name_or_path`) and `quant.<key>` (its quantization_config)."""
    out: dict[str, Any] = {}
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    for source in (text, config):  # top-level keys win over a VLM's text_config
        for key, value in source.items():
            if isinstance(value, (dict,)) or (isinstance(value, list) and len(value) > 8):
                continue
            out[f"model.{_MODEL_ALIASES.get(key, key)}"] = value
            out[f"model.{key}"] = value
    decoder = config.get("decoder") if isinstance(config.get("decoder"), dict) else {}
    if "vocab_size" not in config and isinstance(decoder.get("vocab_size"), int):
        # a composite encoder-decoder (VisionEncoderDecoderModel: Donut, TrOCR) nests its parts' configs: the loss is
        # over the decoder's vocabulary
        out["model.vocab_size"] = decoder["vocab_size"]
    parts = _parts_name_or_path(config)
    if parts:
        out["model.parts_name_or_path"] = parts
    if isinstance(config.get("id2label"), dict) and "num_labels" not in config:
        out["model.num_labels"] = len(config["id2label"])  # to_dict() keeps id2label, not num_labels
    quant = config.get("quantization_config")
    if isinstance(quant, dict):
        out.update({f"quant.{k}": v for k, v in quant.items() if not k.startswith("_")})
    prefix = config.get("pre_seq_len")
    if isinstance(prefix, int) and not isinstance(prefix, bool) and prefix > 0:
        # ChatGLM's P-Tuning v2 (THUDM's ptuning/main.py): a trained prefix of pre_seq_len tokens on a frozen model,
        # saved into the model's own config.json (the default null trains the model itself)
        out["adapter.peft_type"] = "PREFIX_TUNING"
    return out


def _parts_name_or_path(config: dict) -> str | None:
    """"encoder X, decoder Y" where a composite encoder-decoder's config names the trained checkpoint of each part
    (`from_encoder_decoder_pretrained` keeps them in the parts' `_name_or_path`; the composite's own is not saved), else
    None."""
    names = {part: config[part].get("_name_or_path") for part in ("encoder", "decoder")
             if isinstance(config.get(part), dict)}
    if len(names) < 2 or not all(isinstance(n, str) and n.strip() for n in names.values()):
        return None
    return ", ".join(f"{part} {name}" for part, name in names.items())


def read_model_config(path) -> dict[str, Any]:
    """config.json as `model.*`; one that carries a PEFT adapter's fields (peft_type: an adapter's config saved
    under the model's name, alone or merged into the model's) gives `adapter.*` too."""
    config = read_json_object(path)
    out = model_config_values(config)
    if "peft_type" in config:
        out.update(adapter_values(config))
    return out


def read_adapter_config(path) -> dict[str, Any]:
    """adapter_config.json (PEFT) as `adapter.<key>`."""
    config = read_json_object(path)
    if "lora_parameters" in config or "fine_tune_type" in config:
        return mlx_adapter_values(config)
    if "peft_type" not in config and "r" not in config:
        raise UnreadableFile(path, "no peft_type or r: not a PEFT adapter_config.json")
    return adapter_values(config)


# mlx_lm.lora writes its own arguments as adapters/adapter_config.json: the tuner (fine_tune_type lora / dora / full,
# older files only lora_parameters), the base model, the rate and the iterations. It fine-tunes causal LMs only.
_MLX_NAMES = (("learning_rate", "learning_rate"), ("iters", "max_steps"), ("batch_size", "per_device_train_batch_size"),
              ("seed", "seed"), ("model", "model.name_or_path"))
_MLX_QUANTIZED = re.compile(r"(?i)(?<![a-z0-9])(?:quantized|[248]-?bit)(?![a-z0-9])")


def mlx_adapter_values(config: dict) -> dict[str, Any]:
    """MLX-LM's adapter_config.json as RunConfig keys: method (lora, or qlora on a quantized mlx-community base; full
    for `fine_tune_type: full`), the run's settings, framework mlx."""
    out: dict[str, Any] = {ours: config[theirs] for theirs, ours in _MLX_NAMES if config.get(theirs) is not None}
    kind = str(config.get("fine_tune_type") or "lora").lower()
    base = str(config.get("model") or "")
    if kind == "full":
        out["method"] = "full"
    else:
        out["method"] = "qlora" if _MLX_QUANTIZED.search(base) else "lora"
        out["adapter.task_type"] = "CAUSAL_LM"
        out["adapter.base_model_name_or_path"] = base
    return {**out, "_framework": "mlx"}


def adapter_values(config: dict) -> dict[str, Any]:
    out = {f"adapter.{k}": v for k, v in config.items() if not isinstance(v, dict)}
    mapping = config.get("auto_mapping")
    if isinstance(mapping, dict) and mapping.get("unsloth_fixed") is True:
        # Unsloth's get_peft_model rewrites the adapter's auto_mapping (unsloth_zoo's fix_lora_auto_mapping) and
        # marks it so: the adapter was made by Unsloth
        out["adapter.unsloth_fixed"] = True
    return out


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
    scratch = trained_from_scratch(text)
    if scratch:
        out["model.readme_from_scratch"] = scratch
    language_modelling = language_modelling_said(text)
    if language_modelling:
        out["model.readme_lm_objective"] = language_modelling
    framework = _card_tagger(lines)
    if framework:
        out["card.tagged_by"] = framework
    base = _card_base_model(lines)
    if base:
        out["card.base_model"] = base
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


# --- DeepSpeed ---------------------------------------------------------------------------------

def read_deepspeed_config(path) -> dict[str, Any]:
    config = read_json_object(path)
    if not _looks_like_deepspeed(config):
        raise UnreadableFile(path, "none of the DeepSpeed keys (zero_optimization, fp16, bf16, "
                                   "train_micro_batch_size_per_gpu, ...): not a DeepSpeed config")
    return deepspeed_values(config)


_DS_KEYS = {"zero_optimization", "fp16", "bf16", "bfloat16", "train_micro_batch_size_per_gpu", "train_batch_size",
            "gradient_clipping", "communication_data_type", "gradient_accumulation_steps", "optimizer", "scheduler"}


def _looks_like_deepspeed(config: dict) -> bool:
    return bool(_DS_KEYS & set(config))


def read_optim_states(path) -> dict[str, Any]:
    """DeepSpeed `*optim_states.pt`: the embedded ds_config as `ds.*`, plus its loss scaler as `state.*`."""
    content = safe_unpickle_torch_file(path)
    if not isinstance(content, dict) or "optimizer_state_dict" not in content:
        raise UnreadableFile(path, "no optimizer_state_dict: not a DeepSpeed optimizer states file")
    out: dict[str, Any] = {}
    if isinstance(content.get("ds_config"), dict):
        out.update(deepspeed_values(content["ds_config"]))
    if "ds_version" in content:
        out["state.ds_version"] = content["ds_version"]
    optim = content["optimizer_state_dict"]
    if isinstance(optim, dict):
        scaler = optim.get("loss_scaler")
        if isinstance(scaler, dict) and is_number(scaler.get("cur_scale")):
            out["state.loss_scale"] = float(scaler["cur_scale"])
        if isinstance(optim.get("overflow"), bool):
            out["state.overflow"] = optim["overflow"]
    return out


def read_model_states(path) -> dict[str, Any]:
    """DeepSpeed `*model_states.pt`: `state.skipped_steps` (fp16 overflow skips), `state.global_steps`."""
    from ..torchpickle import read_deepspeed_counters

    counters = read_deepspeed_counters(path)
    if not ({"skipped_steps", "global_steps"} & set(counters)):
        raise UnreadableFile(path, "no skipped_steps or global_steps: not a DeepSpeed model states file")
    return {f"state.{k}": counters[k] for k in ("skipped_steps", "global_steps", "global_samples") if k in counters}


def read_megatron_args(path) -> dict[str, Any]:
    """The `args` Namespace of a Megatron `model_optim_rng.pt` or torch_dist `common.pt`, read inertly."""
    content = safe_unpickle_torch_file(path)
    args = content.get("args") if isinstance(content, dict) else None
    if not isinstance(args, dict) or args.get("__class__") != "argparse.Namespace":
        raise UnreadableFile(path, "no argparse Namespace under 'args': not a Megatron checkpoint")
    return megatron_args.config_values({k: v for k, v in args.items() if k != "__class__"})


def read_scaler(path) -> dict[str, Any]:
    """`scaler.pt` (torch GradScaler state_dict): `state.loss_scale` and its growth tracker."""
    content = safe_unpickle_torch_file(path)
    if not isinstance(content, dict) or not is_number(content.get("scale")):
        raise UnreadableFile(path, "no numeric 'scale': not a GradScaler state")
    out = {"state.loss_scale": float(content["scale"])}
    if is_number(content.get("_growth_tracker")):
        out["state.scaler_growth_tracker"] = int(content["_growth_tracker"])
    return out


def read_config_yaml(path) -> dict[str, Any]:
    """A YAML file of any name in the run folder, read where it is a LLaMA-Factory or axolotl run configuration
    (the file given to `llamafactory-cli train` / `axolotl train`), H2O LLM Studio's cfg.yaml, torchtune's
    `torchtune_config.yaml` (the resolved recipe config it saves beside its logs), Lightning's `hparams.yaml` or
    Accelerate's `hparams.yml` (a script's arguments as its TensorBoard tracker saves them), DVCLive's `params.yaml`
    (TrainingArguments), with the framework it names; of any other YAML (a README's front matter, a dataset card,
    hydra's, a script's own config) only the precision its keys name, if any (`_precision_keyed_values`): not every
    YAML file is a run's configuration, and a precision key's value means nothing else."""
    if Path(path).name == "hparams.yaml":  # Lightning's loggers write the module's save_hyperparameters() here
        return lightning_values(yaml_leaves(path))
    if Path(path).name == "hparams.yml":  # Accelerate's TensorBoard tracker: the script's init_trackers(config=...)
        return namespace_args.config_values(yaml_leaves(path))
    if Path(path).name == "params.yaml":
        return dvclive_params_values(path)
    try:
        args = read_flat_yaml(path)
    except UnreadableFile:  # (nested deeper than a framework's flat config: a script's own, by sections)
        return _precision_keyed_values(path)
    if "wandb_version" in args or "_wandb" in args:
        return {}  # W&B's config.yaml ({desc, value} per key) is the tracker reader's
    if "llm_backbone" in args and "problem_type" in args and isinstance(args.get("training"), dict):
        return {**h2o_llmstudio_values(args), "_framework": "h2o_llmstudio"}
    model = args.get("model")
    if isinstance(model, dict) and str(model.get("_component_", "")).startswith("torchtune."):
        return {**torchtune_values(args), "_framework": "torchtune"}
    args = {k: v for k, v in args.items() if not isinstance(v, dict)}  # a run configuration's settings are scalars
    if "finetuning_type" in args or ("stage" in args and "model_name_or_path" in args):
        return {**llamafactory_values(args), "_framework": "llamafactory"}
    if looks_like_axolotl(args):
        return {**axolotl_values(args), "_framework": "axolotl"}
    return _precision_keyed_values(path)


# a container's services (docker-compose.yml, compose.yaml): the settings of what it serves, not of the training
_NOT_A_RUNS_CONFIG = re.compile(r"(?i)^(?:docker-)?compose[\w.-]*\.ya?ml$")


def _precision_keyed_values(path) -> dict[str, Any]:
    """`precision.config_file` (with `precision.config_file_words`) where a YAML no framework's reader took names the
    training's precision by key (`config_precision`), and `precision.flags_off` ("bf16", "fp16" or both) where it sets
    a mixed-precision flag false; else {}."""
    if _NOT_A_RUNS_CONFIG.match(Path(path).name):
        return {}
    pairs = training_pairs(yaml_sectioned_values(path))
    keyed, off = precision_keyed(pairs), flags_off(pairs)
    out = {} if keyed is None else {"precision.config_file": keyed[0], "precision.config_file_words": keyed[1]}
    return {**out, "precision.flags_off": ",".join(off)} if off else out


# transformers' DVCLiveCallback.setup logs `args.to_dict()` with DVCLive's log_params (live.py) to
# `dvclive/params.yaml`: the run's TrainingArguments, known by fields of their own; a DVC project's params.yaml (a
# pipeline's parameters, read by its stages) is not the run's record and gives nothing
_TRAINING_ARGS_FIELDS = ("output_dir", "per_device_train_batch_size", "logging_steps")


def dvclive_params_values(path) -> dict[str, Any]:
    """A `params.yaml` holding TrainingArguments (DVCLive's, as the HF callback logs them) as RunConfig keys, or {}."""
    try:
        args = read_flat_yaml(path)
    except UnreadableFile:  # ruamel's dump of a nested field (fsdp_config, accelerator_config): leaves by name
        args = yaml_leaves(path)
    return training_args_values(args) if all(k in args for k in _TRAINING_ARGS_FIELDS) else {}
