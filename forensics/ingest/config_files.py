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

import json
import math
import re
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from ._jsonfile import read_json_object
from ..torchpickle import safe_unpickle_torch_file
from . import megatron_args, namespace_args
from .training_args import read_training_args

# config.json keys that other architectures spell differently (GPT-2: n_layer, n_embd).
_MODEL_ALIASES = {"n_layer": "num_hidden_layers", "num_layers": "num_hidden_layers", "n_embd": "hidden_size",
                  "d_model": "hidden_size", "n_head": "num_attention_heads", "n_inner": "intermediate_size",
                  # ChatGLM / GLM-4 (THUDM's configuration_chatglm.py)
                  "ffn_hidden_size": "intermediate_size", "multi_query_group_num": "num_key_value_heads",
                  "padded_vocab_size": "vocab_size", "inner_hidden_size": "intermediate_size"}


def flatten(prefix: str, value: dict) -> dict[str, Any]:
    """Nested dicts as dotted keys under `prefix`: {"fp16": {"enabled": 1}} -> {"ds.fp16.enabled": 1}."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        dotted = f"{prefix}.{key}"
        if isinstance(item, dict) and item:
            out.update(flatten(dotted, item))
        else:
            out[dotted] = item
    return out


# --- Hugging Face: training_args.bin, config.json, adapter_config.json -----------------------

def training_args_values(args: dict) -> dict[str, Any]:
    """TrainingArguments fields (private ones left out) plus the resolved DeepSpeed config it holds, and the
    arguments' class as `training_args_class` where the file names it (a pickle's `__class__`)."""
    # Private fields are runtime state; `*_token` fields are secrets (HF masks them in the TB text too).
    out = {k: _without_class(v) for k, v in args.items()
           if not k.startswith("_") and not k.endswith("_token") and k not in ("hf_deepspeed_config", "deepspeed_plugin")}
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
    """config.json as `model.<key>` (scalars and short lists, `model.num_labels` from id2label) and
    `quant.<key>` (its quantization_config)."""
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
    return {f"adapter.{k}": v for k, v in config.items() if not isinstance(v, dict)}


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
    """A model card's quantization block as `quant.<key>`, and `card.tagged_by` where its header's tags name the
    framework that wrote it ({} where the card has neither: a README is not a config)."""
    with open(path, "rb") as fh:  # an OSError is the caller's to report, as for every config file
        lines = fh.read(_CARD_BYTES).decode("utf-8", errors="replace").splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith(_CARD_QUANT)), None)
    out: dict[str, Any] = {}
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


def _card_header(lines: list[str]) -> list[str]:
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
    header = _card_header(lines)
    for i, line in enumerate(header):
        m = _CARD_BASE.match(line.rstrip())
        if m and m.group(1):
            return m.group(1)
        if m and i + 1 < len(header) and (item := _CARD_LIST_ITEM.match(header[i + 1])):
            return item.group(1)
    return None


def _card_tagger(lines: list[str]) -> str | None:
    """The framework a model card's YAML header tags it with (`tags:` then `- llama-factory` lines), or None."""
    in_tags, tags = False, set()
    for line in _card_header(lines):
        if not line.startswith((" ", "\t", "-")):
            in_tags = line.strip() == "tags:"
        elif in_tags and (m := _CARD_TAG.match(line)):
            tags.add(m.group(1).lower())
    return next((framework for tag, framework in _CARD_TAGGERS.items() if tag in tags), None)


# --- DeepSpeed ---------------------------------------------------------------------------------

def deepspeed_values(config: dict) -> dict[str, Any]:
    """A DeepSpeed config as `ds.<dotted>` keys; the legacy `bfloat16` section is read as `bf16`."""
    config = dict(config)
    if "bfloat16" in config and "bf16" not in config:
        config["bf16"] = config.pop("bfloat16")
    return flatten("ds", config)


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


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- LLaMA-Factory training_args.yaml and ms-swift args.json ------------------------------------

_SAME_NAMES = ("learning_rate", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "max_grad_norm", "fp16", "bf16",
               "optim", "gradient_accumulation_steps", "per_device_train_batch_size", "logging_steps", "weight_decay",
               "num_train_epochs", "max_steps", "seed", "deepspeed", "logging_nan_inf_filter", "save_steps")


def llamafactory_values(args: dict) -> dict[str, Any]:
    """LLaMA-Factory arguments (training_args.yaml) as RunConfig keys, with its defaults made explicit."""
    out = {k: args[k] for k in _SAME_NAMES if k in args}
    out.update(_quantization(args.get("quantization_bit"), args.get("quantization_method", "bnb"),
                             args.get("double_quantization", True)))  # LLaMA-Factory's default is True
    if args.get("pure_bf16"):
        out["bf16"] = True
    for ours, theirs in (("adapter.r", "lora_rank"), ("adapter.lora_alpha", "lora_alpha"),
                         ("model.name_or_path", "model_name_or_path"), ("stage", "stage")):
        if theirs in args:
            out[ours] = args[theirs]
    method = _method(args.get("finetuning_type"), args.get("quantization_bit"))
    if method:
        out["method"] = method
    return out


def swift_values(args: dict) -> dict[str, Any]:
    """ms-swift `args.json` (v2 names sft_type/dtype/quantization_bit, v3+ train_type/torch_dtype/quant_bits, later
    tuner_type)."""
    out = {k: args[k] for k in _SAME_NAMES if k in args and not isinstance(args[k], dict)}
    bits = args.get("quant_bits", args.get("quantization_bit"))
    out.update(_quantization(bits, args.get("quant_method", "bnb"), args.get("bnb_4bit_use_double_quant", True)))
    if isinstance(args.get("deepspeed"), dict):
        out.update(deepspeed_values(args["deepspeed"]))
    dtype = args.get("torch_dtype", args.get("dtype"))
    if dtype:
        out["model.torch_dtype"] = dtype
    if "fp16" not in out and "bf16" not in out and args.get("dtype") in _SWIFT2_DTYPE_FLAGS:
        # ms-swift 2.x sets its mixed-precision flags from `dtype` (select_dtype): a record without them says it there
        out.update(_SWIFT2_DTYPE_FLAGS[args["dtype"]])
    # the tuner's name: train_type (v3), tuner_type (later releases, which leave train_type null), sft_type (v2)
    method = _method(next((args[k] for k in ("train_type", "tuner_type", "sft_type") if args.get(k)), None), bits)
    # args.json lists lora_rank / lora_alpha defaults for every run: they describe an adapter only when one was trained
    adapter_keys = () if method == "full" else (("adapter.r", "lora_rank"), ("adapter.lora_alpha", "lora_alpha"))
    for ours, theirs in adapter_keys + (("model.name_or_path", "model"),):
        if theirs in args and not isinstance(args[theirs], dict):
            out[ours] = args[theirs]
    if method:
        out["method"] = method
    stage = args.get("rlhf_type") or _swift_stage(args)  # `swift rlhf` names its algorithm there
    if stage:
        out["stage"] = stage
    # a DPO's NLL weight (loss = pair term + rpo_alpha x nll); ms-swift lists it for every rlhf_type, only DPO uses it
    if isinstance(args.get("rpo_alpha"), (int, float)) and args.get("rlhf_type") == "dpo":
        out["rpo_alpha"] = args["rpo_alpha"]
    out["_framework"] = "swift"  # its own record of the run; no tracker config holds a "_" key
    return out


# ms-swift 2.x's `dtype` after select_dtype: bf16 -> bf16 mixed precision, fp16 -> fp16 (a full run's weights then in
# fp32), fp32 -> neither ("AUTO" is resolved to one of these before the record is written)
_SWIFT2_DTYPE_FLAGS = {"bf16": {"bf16": True, "fp16": False}, "fp16": {"fp16": True, "bf16": False},
                       "fp32": {"fp16": False, "bf16": False}}


def _swift_stage(args: dict) -> str | None:
    """`swift sft` or `swift pt` for a causal-LM run with no `rlhf_type`: `swift rlhf` records its algorithm there,
    and `swift pt`'s PretrainArguments differ from SftArguments only by use_chat_template False and loss_scale
    'all' (swift/llm/argument/train_args.py). A v2 record without use_chat_template says neither."""
    if args.get("rlhf_type") or args.get("task_type", "causal_lm") != "causal_lm" or "use_chat_template" not in args:
        return None
    if args["use_chat_template"]:
        return "sft"
    # an SFT with the template off still scores only the responses (loss_scale "default"): only both say `swift pt`
    return "pt" if args.get("loss_scale") == "all" else None


def _quantization(bits: Any, method: Any, double_quant: Any) -> dict[str, Any]:
    if bits in (None, "", 0, "None"):
        return {}
    bits = int(bits) if str(bits).isdigit() else bits
    out = {"quant.bits": bits, "quant.quant_method": "bitsandbytes" if method in ("bnb", "bitsandbytes") else method,
           "quant.load_in_4bit": bits == 4, "quant.load_in_8bit": bits == 8}
    if bits == 4 and out["quant.quant_method"] == "bitsandbytes":
        out["quant.bnb_4bit_use_double_quant"] = bool(double_quant)
    return out


def _method(kind: Any, bits: Any) -> str | None:
    if not isinstance(kind, str):
        return None
    kind = kind.lower()
    if kind == "full":
        return "full"
    if kind in ("lora", "qlora", "longlora", "adalora", "dora", "lora+", "loraplus", "pissa", "olora"):
        return "qlora" if kind == "qlora" or bits not in (None, "", 0, "None") else "lora"
    if kind in _OTHER_PEFT:
        return "peft"
    return kind


# tuners that train a few added parameters, not a LoRA (ChatGLM's P-Tuning v2, ms-swift's prompt/prefix tuners)
_OTHER_PEFT = ("p_tuning", "ptuning", "p-tuning", "ptuning_v2", "prefix", "prefix_tuning", "prompt", "prompt_tuning",
               "ia3", "vera", "boft", "loha", "lokr", "reft", "adapter")


def read_llamafactory_args(path) -> dict[str, Any]:
    """LLaMA-Factory's arguments: its training_args.yaml, or the same arguments saved as a JSON object."""
    args = read_json_object(path) if str(path).lower().endswith(".json") else read_flat_yaml(path)
    return llamafactory_values(args)


def read_finetuning_args(path) -> dict[str, Any]:
    """hiyouga's FinetuningArguments (ChatGLM-Efficient-Tuning's finetuning_args.bin, a pickled dataclass read
    without running it; early LLaMA-Factory's finetuning_args.json): the tuner it names, `finetuning_type`
    (lora, p_tuning, freeze, full), and the framework: only hiyouga's trainers (ChatGLM-Efficient-Tuning, the
    LLaMA-Factory it became) save this file. Its lora_rank and lora_alpha are listed whatever the tuner: left out."""
    args = read_json_object(path) if str(path).endswith(".json") else read_training_args(path)
    method = _method(args.get("finetuning_type"), args.get("quantization_bit"))
    framework = {"_framework": "llamafactory"} if "finetuning_type" in args else {}
    return {"method": method, **framework} if method else framework


def read_config_yaml(path) -> dict[str, Any]:
    """A YAML file of any name in the run folder, read where it is a LLaMA-Factory or axolotl run configuration
    (the file given to `llamafactory-cli train` / `axolotl train`), H2O LLM Studio's cfg.yaml, torchtune's `torchtune_config.yaml` (the resolved
    recipe config it saves beside its logs), Lightning's `hparams.yaml` or Accelerate's `hparams.yml` (a script's
    arguments as its TensorBoard tracker saves them), DVCLive's `params.yaml` (TrainingArguments), with the framework
    it names; {} for any other YAML (a README's front matter, a dataset card, hydra's): not every YAML file is a
    run's configuration."""
    if Path(path).name == "hparams.yaml":  # Lightning's loggers write the module's save_hyperparameters() here
        return lightning_values(yaml_leaves(path))
    if Path(path).name == "hparams.yml":  # Accelerate's TensorBoard tracker: the script's init_trackers(config=...)
        return namespace_args.config_values(yaml_leaves(path))
    if Path(path).name == "params.yaml":
        return dvclive_params_values(path)
    try:
        args = read_flat_yaml(path)
    except UnreadableFile:
        return {}
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
    if "base_model" in args and any(k in args for k in _AXOLOTL_KEYS):
        return {**axolotl_values(args), "_framework": "axolotl"}
    return {}


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


def torchtune_values(args: dict) -> dict[str, Any]:
    """A torchtune recipe config as RunConfig keys: the method from the model builder (`lora_llama3_2_1b`,
    `qlora_llama3_8b`, or a plain builder: every weight), the precision from `dtype`, the optimizer's rate."""
    builder = str(args["model"].get("_component_", "")).rsplit(".", 1)[-1].lower()
    out: dict[str, Any] = {"method": "qlora" if builder.startswith("qlora_") else
                           "lora" if builder.startswith(("lora_", "dora_")) else "full"}
    if isinstance(args["model"].get("lora_rank"), int):
        out["adapter.r"] = args["model"]["lora_rank"]
    dtype = str(args.get("dtype") or "").lower()
    if dtype in ("bf16", "fp16", "fp32"):
        out["bf16"], out["fp16"] = dtype == "bf16", dtype == "fp16"
    optimizer = args.get("optimizer")
    if isinstance(optimizer, dict) and isinstance(optimizer.get("lr"), (int, float)):
        out["learning_rate"] = optimizer["lr"]
    for theirs, ours in (("epochs", "num_train_epochs"), ("batch_size", "per_device_train_batch_size"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps"),
                         ("clip_grad_norm", "max_grad_norm")):
        if isinstance(args.get(theirs), (int, float)) and not isinstance(args.get(theirs), bool):
            out[ours] = args[theirs]
    return out


_AXOLOTL_KEYS = ("adapter", "micro_batch_size", "sequence_len", "datasets")
# axolotl's names -> ours, where they mean the same
_AXOLOTL_NAMES = (("num_epochs", "num_train_epochs"), ("micro_batch_size", "per_device_train_batch_size"),
                  ("optimizer", "optim"), ("lr_scheduler", "lr_scheduler_type"), ("base_model", "model.name_or_path"),
                  ("lora_r", "adapter.r"), ("lora_alpha", "adapter.lora_alpha"))


def axolotl_values(args: dict) -> dict[str, Any]:
    """An axolotl config (axolotl's own key names) as RunConfig keys: `adapter` lora / qlora, or none (every weight),
    `load_in_4bit` / `load_in_8bit` for the base; `bf16: auto` says nothing until the hardware is known."""
    out = {k: args[k] for k in _SAME_NAMES if args.get(k) not in (None, "auto")}
    out.update({ours: args[theirs] for theirs, ours in _AXOLOTL_NAMES if args.get(theirs) is not None})
    bits = 4 if args.get("load_in_4bit") is True else 8 if args.get("load_in_8bit") is True else None
    out.update(_quantization(bits, "bnb", True))
    adapter = args.get("adapter")
    out["method"] = _method(adapter, bits) if isinstance(adapter, str) and adapter else "full"
    return out


def autotrain_values(params: dict) -> dict[str, Any]:
    """AutoTrain Advanced's training_params.json (src/autotrain/trainers/common.py:247 saves the trainer's params):
    `peft` true a LoRA (a QLoRA where `quantization` is int4 / int8), `mixed_precision` bf16 / fp16; {} for a file of
    that name that is not AutoTrain's (no `project_name` and `trainer`)."""
    if not ("project_name" in params and "trainer" in params):
        return {}
    quant = str(params.get("quantization") or "").lower()
    bits = {"int4": 4, "int8": 8}.get(quant)
    out: dict[str, Any] = {"method": _method("lora", bits) if params.get("peft") is True else "full",
                           **_quantization(bits, "bnb", True), "_framework": "autotrain"}
    precision = str(params.get("mixed_precision") or "").lower()
    if precision in ("bf16", "fp16"):
        out["bf16"], out["fp16"] = precision == "bf16", precision == "fp16"
    for theirs, ours in (("lr", "learning_rate"), ("epochs", "num_train_epochs"),
                         ("batch_size", "per_device_train_batch_size"), ("model", "model.name_or_path")):
        if isinstance(params.get(theirs), (int, float, str)) and not isinstance(params.get(theirs), bool):
            out[ours] = params[theirs]
    return out


def read_autotrain_params(path) -> dict[str, Any]:
    return autotrain_values(read_json_object(path))


def h2o_llmstudio_values(args: dict) -> dict[str, Any]:
    """H2O LLM Studio's cfg.yaml (its experiment's configuration): `training.lora` a LoRA (a QLoRA where
    `architecture.backbone_dtype` is int4 / int8), `environment.mixed_precision_dtype` the precision where
    `mixed_precision` is on."""
    training, arch, env = (args.get(k) if isinstance(args.get(k), dict) else {}
                           for k in ("training", "architecture", "environment"))
    bits = {"int4": 4, "int8": 8}.get(str(arch.get("backbone_dtype")))
    out: dict[str, Any] = {"method": _method("lora", bits) if training.get("lora") is True else "full",
                           **_quantization(bits, "bnb", True), "model.name_or_path": args["llm_backbone"]}
    dtype = str(env.get("mixed_precision_dtype") or "")
    if env.get("mixed_precision") is True and dtype in ("bfloat16", "float16"):
        out["bf16"], out["fp16"] = dtype == "bfloat16", dtype == "float16"
    if is_number(training.get("learning_rate")):
        out["learning_rate"] = training["learning_rate"]
    return out


def ludwig_values(params: dict) -> dict[str, Any]:
    """Ludwig's model/model_hyperparameters.json (an LLM's: `model_type` llm): `adapter.type` lora a LoRA (a QLoRA
    where `quantization.bits` is set), none every weight; {} for any other file of that name."""
    if params.get("model_type") != "llm" or "input_features" not in params:
        return {}
    adapter = params.get("adapter") if isinstance(params.get("adapter"), dict) else {}
    quant = params.get("quantization") if isinstance(params.get("quantization"), dict) else {}
    bits = quant.get("bits") if quant.get("bits") in (4, 8) else None
    kind = adapter.get("type")
    out: dict[str, Any] = {"method": (_method(kind, bits) if isinstance(kind, str) else None) or "full",
                           **_quantization(bits, "bnb", True), "_framework": "ludwig"}
    if isinstance(params.get("base_model"), str):
        out["model.name_or_path"] = params["base_model"]
    return out


def read_ludwig_hyperparameters(path) -> dict[str, Any]:
    return ludwig_values(read_json_object(path))


_ADAPTER_WORDS = re.compile(r"lora|adapter|peft|prefix|prompt_tun|ia3|freeze", re.IGNORECASE)


def lightning_values(hparams: dict) -> dict[str, Any]:
    """A Lightning module's hyperparameters (`hparams.yaml`, any nesting, leaf names) as RunConfig keys: the names a
    script's argparse arguments have (`namespace_args`: rate, epochs, batch size, the pre-trained model, or the sizes
    of a model built from random weights), method full where a pre-trained model is named and nothing says adapter,
    and the framework."""
    out = namespace_args.config_values(hparams)
    said = [k for k in hparams] + [v for v in hparams.values() if isinstance(v, str)]  # `lora_r: 8`, `method: lora`
    if out.get("model.name_or_path") and not any(_ADAPTER_WORDS.search(x) for x in said):
        out["method"] = "full"
    return {**out, "_framework": "lightning"}


def yaml_leaves(path) -> dict[str, Any]:
    """Every `key: scalar` of an indented YAML mapping, by its own (leaf) name, the first of each name; list items
    and lines that are no `key: value` are passed over. {} where the file is not UTF-8 text."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        return {}
    out: dict[str, Any] = {}
    for raw in text.splitlines():
        m = _KEY_LINE.match(_strip_comment(raw).strip())
        if m and m.group(2) is not None and m.group(1) not in out:
            out[m.group(1)] = yaml_scalar(m.group(2).strip())
    return out


def read_swift_args(path) -> dict[str, Any]:
    return swift_values(read_json_object(path))


# --- the flat YAML LLaMA-Factory writes (yaml.dump of a dict of scalars) --------------------------

_KEY_LINE = re.compile(r"^([A-Za-z_][\w.\-]*)\s*:(?:\s+(.*))?$")


def read_flat_yaml(path) -> dict[str, Any]:
    """A flat `key: value` YAML file (plus `- item` lists and one nested level) as a dict.

    PyYAML is not a dependency; LLaMA-Factory's `training_args.yaml` is a `yaml.dump` of a
    flat dict, which this reads exactly. Raises UnreadableFile on anything else.
    """
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableFile(path, "not UTF-8 text") from None
    out: dict[str, Any] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        if raw[0] in " \t-" and current is not None:
            _add_nested(out, current, line.strip(), path, number)
            continue
        match = _KEY_LINE.match(line)
        if not match:
            raise UnreadableFile(path, f"line {number} is not 'key: value' YAML: {raw.strip()[:60]!r}")
        current = match.group(1)
        out[current] = None if match.group(2) is None else yaml_scalar(match.group(2).strip())
    return out


def _add_nested(out: dict, key: str, line: str, path, number: int) -> None:
    if line.startswith("- ") or line == "-":
        if not isinstance(out.get(key), list):
            out[key] = []
        out[key].append(yaml_scalar(line[1:].strip()))
        return
    match = _KEY_LINE.match(line)
    if not match:
        raise UnreadableFile(path, f"line {number} is not 'key: value' YAML: {line[:60]!r}")
    if not isinstance(out.get(key), dict):
        out[key] = {}
    out[key][match.group(1)] = None if match.group(2) is None else yaml_scalar(match.group(2).strip())


def _strip_comment(line: str) -> str:
    if line.lstrip().startswith("#"):
        return ""
    if "'" in line or '"' in line:
        return line  # a quoted value may hold '#'; yaml.dump never adds comments anyway
    return re.sub(r"\s+#.*$", "", line)


_BOOLS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def yaml_scalar(text: str) -> Any:
    """One YAML 1.1 plain or quoted scalar (PyYAML's resolution rules for the common cases)."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [yaml_scalar(t.strip()) for t in text[1:-1].split(",") if t.strip()]
    lowered = text.lower()
    if lowered in ("null", "~", ""):
        return None
    if lowered in _BOOLS:
        return _BOOLS[lowered]
    if lowered in (".inf", "+.inf", "-.inf", ".nan"):
        return {".nan": math.nan, "-.inf": -math.inf}.get(lowered, math.inf)
    for kind in (int, float):
        try:
            return kind(text.replace("_", ""))
        except ValueError:
            pass
    return text
