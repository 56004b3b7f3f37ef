"""Readers of training front ends' own run configurations (LLaMA-Factory, ms-swift, torchtune, axolotl,
AutoTrain, H2O LLM Studio, Ludwig, Lightning's hparams.yaml, DVCLive's params.yaml), each returning flat `RunConfig`
keys -> values in the names `config_files` uses, with `_framework` where the file is the framework's own record."""
from __future__ import annotations

import re
from typing import Any

from ._jsonfile import read_json_object
from . import namespace_args
from ._config_keys import deepspeed_values, is_number
from .flat_yaml import read_flat_yaml
from .training_args import read_training_args

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


def looks_like_axolotl(args: dict) -> bool:
    """An axolotl config: its base model beside one of the keys only axolotl's schema has."""
    return "base_model" in args and any(k in args for k in _AXOLOTL_KEYS)


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


def read_model_metadata(path) -> dict[str, Any]:
    """A training script's own model_metadata.json: its `total_params` (Keras' model.count_params(), as
    AnggaMarcelio_english-javanese-lstm-attention writes it) is the model's size."""
    total = read_json_object(path).get("total_params")
    return {"n_params": total} if type(total) is int and total > 0 else {}


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


def read_swift_args(path) -> dict[str, Any]:
    return swift_values(read_json_object(path))
