"""A training script's arguments as argparse prints them: `Namespace(lr=20, epochs=5, model='LSTM', ...)`.

Many hand-written scripts `print(args)` first thing; the line says the run's setting the way training_args.bin does
for the HF Trainer. `parse(text)` returns the first such line's arguments (literal values only, read with
ast.literal_eval, never run), `config_values(args)` the ones with an HF-named counterpart as RunConfig keys, and
`model.built_from_sizes` where the arguments give the model's own sizes and name no weights to start from,
`model.pretrained_off` where an argument switches a pre-trained model off and none sets an adapter.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from .notebook_code.cells import parse_quietly

TEXT_KEY = "namespace_args"  # LogRecords.texts key: the arguments as JSON
_LINE = re.compile(r"\bNamespace\((?P<body>[^\n\r]{1,20000})\)[ \t]*\r?$", re.MULTILINE)
# argparse names -> RunConfig keys, where the meaning is the same (the first name present wins)
_NAMES = (
    (("learning_rate", "lr"), "learning_rate"),
    (("num_train_epochs", "epochs", "num_epochs", "n_epochs", "max_epochs"), "num_train_epochs"),
    (("per_device_train_batch_size", "batch_size", "train_batch_size", "micro_batch_size"),
     "per_device_train_batch_size"),
    (("gradient_accumulation_steps", "grad_accum", "accumulation_steps", "gradient_accumulation"),
     "gradient_accumulation_steps"),
    (("max_grad_norm", "grad_clip", "clip", "clip_grad", "gradient_clipping"), "max_grad_norm"),
    (("warmup_steps", "warmup_iters", "lr_warmup_steps"), "warmup_steps"),
    (("warmup_ratio",), "warmup_ratio"),
    (("weight_decay", "wd"), "weight_decay"),
    (("max_steps", "max_iters", "train_iters", "total_steps"), "max_steps"),
    (("seed",), "seed"),
    (("fp16",), "fp16"),
    (("bf16",), "bf16"),
    (("model_name_or_path", "model_name", "base_model", "model_path", "pretrained_model_name_or_path"),
     "model.name_or_path"),
    (("output_dir", "out_dir", "save_dir"), "output_dir"),
    (("optim", "optimizer", "optimizer_name", "opt"), "optim"),
)
# A script that takes its model's layer count and width as arguments builds the model itself, from random weights,
# unless an argument names weights to start from (a checkpoint, a pre-trained model, a resume).
_LAYER_COUNTS = ("nlayers", "n_layer", "n_layers", "num_layers", "num_hidden_layers", "depth")
_WIDTHS = ("emsize", "nhid", "n_embd", "d_model", "hidden_size", "hidden_dim", "embed_dim", "emb_dim", "n_hidden")
_STARTING_WEIGHTS = re.compile(r"pretrain|checkpoint|ckpt|resume|restore|load|init_from|base_model|name_or_path|"
                               r"model_name|model_path|weights|finetun|adapter|lora", re.IGNORECASE)
# names of pre-trained model families on the hub: `model='gpt2'` with sizes beside it may still load its weights
_PRETRAINED = re.compile(r"(?i)^(?:distil)?(?:gpt2|gpt_?neo|gptj|bert|roberta|t5|mt5|bart|llama|qwen|mistral|gemma|"
                         r"phi|opt|bloom|pythia|falcon|deberta|electra|xlnet|albert|smollm|olmo)")
# An argument that switches a pre-trained model on or off (`pretrained=''`, `use_pretrained=False`): off, the script
# loads no trained model and trains the one it builds, whole, unless an argument sets an adapter on it (`_ADAPTER_ARGS`)
_PRETRAINED_SWITCH = re.compile(r"^(?:use_|load_|from_)?pretrained(?:_model|_path|_weights|_checkpoint|_ckpt)?$",
                                re.IGNORECASE)
_ADAPTER_ARGS = re.compile(r"lora|adapter|peft|prefix_tuning|p_?tuning", re.IGNORECASE)
_SET_OFF = (None, False, "", 0, "None", "none", "scratch")  # a value that names no weights
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16"}


def parse(text: str) -> dict[str, Any]:
    """The literal keyword arguments of the first `Namespace(...)` line ({} where there is none)."""
    m = _LINE.search(text) if "Namespace(" in text else None
    if m is None:
        return {}
    try:
        call = parse_quietly(f"f({m.group('body')})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, Any] = {}
    for keyword in getattr(call, "keywords", []):
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue  # device(type='cuda'), a path object: not a literal, not read
        if keyword.arg and (isinstance(value, (int, float, bool, str)) or value is None):
            out[keyword.arg] = value
    return out


def config_values(args: dict) -> dict[str, Any]:
    """The arguments as RunConfig keys: HF-named counterparts, precision from `dtype` / `mixed_precision`."""
    out: dict[str, Any] = {}
    for names, ours in _NAMES:
        value = next((args[n] for n in names if args.get(n) is not None), None)
        if value is not None and not (ours in ("fp16", "bf16") and not isinstance(value, bool)):
            out[ours] = value
    for key in ("dtype", "precision", "mixed_precision", "torch_dtype"):
        said = _DTYPES.get(str(args.get(key, "")).lower().replace("torch.", ""))
        if said and said not in out:
            out[said] = True
    sizes = built_from_sizes(args)
    if sizes:
        out["model.built_from_sizes"] = sizes
    switched_off = pretrained_switched_off(args)
    if switched_off:
        out["model.pretrained_off"] = switched_off
    return out


def own_name(args: dict, ours: str) -> str | None:
    """The script's own name for the setting `config_values` reads as the RunConfig key `ours` (`clip` for
    max_grad_norm in pytorch/examples' word_language_model), None where no argument of it is set.

    >>> own_name({"clip": 0.25, "lr": 20}, "max_grad_norm")
    'clip'
    """
    names = next((names for names, key in _NAMES if key == ours), ())
    return next((n for n in names if args.get(n) is not None), None)


def pretrained_switched_off(args: dict) -> str | None:
    """`name=value` of the argument that switches a pre-trained model off (`pretrained=''`, `use_pretrained=False`)
    where no argument sets an adapter (`lora_r=8`, `use_peft=True`), else None: the script trains the model it builds,
    every weight of it (styxjedi/ada-self-attn-defseq's Namespace: pretrained='', its first loss at ln of its
    vocabulary). Word vectors put into that model (`pretrained_word_emb_path`) are no model to start from."""
    if any(_ADAPTER_ARGS.search(k) and v not in _SET_OFF for k, v in args.items()):
        return None
    return next((f"{k}={v!r}" for k, v in args.items() if _PRETRAINED_SWITCH.match(k) and v in _SET_OFF), None)


def built_from_sizes(args: dict) -> str | None:
    """The sizes ("emsize=200, nhid=200, nlayers=2") where the arguments give the model's layer count and width and
    no argument names weights to start from (a value that is set: `resume=''`, `pretrained=False` name none), and
    no `model` argument names a hub model or a file; else None. Such a script builds its model from random weights."""
    layers = [k for k in _LAYER_COUNTS if isinstance(args.get(k), int) and not isinstance(args[k], bool)]
    widths = [k for k in _WIDTHS if isinstance(args.get(k), int) and not isinstance(args[k], bool)]
    if not layers or not widths:
        return None
    if any(_STARTING_WEIGHTS.search(k) and v not in (None, False, "", 0, "None", "none", "scratch")
           for k, v in args.items()):
        return None
    model = args.get("model", args.get("arch"))
    if isinstance(model, str) and ("/" in model or "." in model or "-" in model or _PRETRAINED.match(model)):
        return None  # 'gpt2', 'gpt2-medium', 'org/name', 'model.pt': a named or saved model, not an architecture
    return ", ".join(f"{k}={args[k]}" for k in widths + layers)
