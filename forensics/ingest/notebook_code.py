"""What a notebook's own code says of the run it trained, for the run profile: the arguments it passed.

Outputs say what ran; for the method, the precision and the model, a notebook's outputs are often silent (a Colab
run prints the Trainer's table and little else), while its code names them: `LoraConfig(r=16, ...)`,
`BitsAndBytesConfig(load_in_4bit=True)`, `FastLanguageModel.from_pretrained("unsloth/...-bnb-4bit",
load_in_4bit=True)`, `TrainingArguments(bf16=True, ...)`, TRL's `SFTConfig(...)` / `GRPOConfig(...)`. Only cells
that ran (an execution count or an output; where the counts were cleared, the cells up to the last output) are read, parsed with `ast` (never run); shell and magic lines are blanked first, and a
cell that is not Python is passed over. A keyword is taken where its value is a literal, or where it is Unsloth's
`is_bfloat16_supported()` (negated or not: its notebooks' `fp16 = not is_bfloat16_supported()`), which the
`Bfloat16 = TRUE / FALSE` line of Unsloth's banner in the outputs answers. Where a later cell passes a keyword again
(an SFT, then a DPO), the later value stands: the notebook's last run is the one its last table shows.

TEXT_KEY names the values in a LogRecords' texts (JSON), where ingest.run_config reads them.
`code_values(cells, outputs)` gives a flat dict in the run configuration's names (`bf16`, `fp16`, `learning_rate`,
`training_args_class`, `trainer_class` (a TRL trainer the code builds: `trl.SFTTrainer`), `quant.load_in_4bit`,
`quant.bits` / `quant.quant_method` (`GPTQConfig(bits=4)`, `AwqConfig(bits=4)`),
`adapter.peft_type`, `adapter.r`, `model.name_or_path`, `model.load_dtype` (a half-precision load),
`precision.default_fp32` where the notebook trains in its own
code with nothing below float32 asked for, `precision.trainer_fp32` (the arguments class) where it builds a Trainer
whose arguments leave fp16 and bf16 off and nothing else asks for mixed precision, `precision.unsloth_mixed` ("fp16" / "bf16": the mixed precision Unsloth's
trainer turns on where the code sets neither flag), `precision.autocast` ("fp16" / "bf16": a hand-written loop's
autocast), `model.built_here` where it builds its model from random weights), empty
where the code says none of them.
"""
from __future__ import annotations

import ast
import re
import warnings

TEXT_KEY = "notebook_code"

# Arguments classes whose keywords are TrainingArguments fields (TRL's configs subclass it, Unsloth's too)
_ARGUMENT_CLASSES = re.compile(r"^(?:\w*TrainingArguments|(?:SFT|DPO|KTO|ORPO|CPO|GRPO|RLOO|PPO|Reward|GKD|BCO|"
                               r"OnlineDPO|Nash|XPO|PRM)Config)$")
_TRL_CLASSES = re.compile(r"Config$")
_TRAINING_FIELDS = ("bf16", "fp16", "learning_rate", "num_train_epochs", "max_steps", "logging_steps",
                    "per_device_train_batch_size", "gradient_accumulation_steps", "optim", "lr_scheduler_type",
                    "warmup_steps", "warmup_ratio", "max_grad_norm", "weight_decay", "beta")
_PEFT_CONFIGS = {"LoraConfig": "LORA", "AdaLoraConfig": "ADALORA", "LoHaConfig": "LOHA", "LoKrConfig": "LOKR",
                 "IA3Config": "IA3", "PromptTuningConfig": "PROMPT_TUNING", "PrefixTuningConfig": "PREFIX_TUNING",
                 "PromptEncoderConfig": "P_TUNING"}
# `get_peft_model(model, r=16, ...)` is Unsloth's (FastLanguageModel / FastModel): a LoRA
_PEFT_BUILDERS = ("get_peft_model",)
_LOADERS = ("from_pretrained",)
# a model class (AutoModelForCausalLM, GPT2LMHeadModel, LlamaForCausalLM, FastLanguageModel ...), not a tokenizer's
_MODEL_CLASSES = re.compile(r"(?:Model|For[A-Z]\w*)$|^AutoModel")
_BF16_SUPPORT = ("is_bfloat16_supported", "is_bf16_supported")
_UNSLOTH_BF16 = re.compile(r"Bfloat16 = (TRUE|FALSE)")
_SHELL_OR_MAGIC = re.compile(r"^\s*[!%?]|\?\s*$")
_NOT_PYTHON_CELL = re.compile(r"^\s*%%(?!capture|time|timeit)")
_MAX_CELL_CHARS = 200_000


def code_values(cells: list, outputs: str) -> dict:
    """The run-configuration values the notebook's executed code cells pass (module docstring)."""
    said = _UNSLOTH_BF16.search(outputs)
    bf16_supported = None if said is None else said.group(1) == "TRUE"
    names: dict[str, object] = {}  # `load_in_4bit = True`, `model_name = "..."`: a name later passed as a keyword
    values: dict = {}
    called: set[str] = set()
    trl_names: set[str] = set()  # what the cells imported from trl (`from trl import SFTTrainer`)
    loads: list[tuple[tuple[int, int], str | None, dict]] = []  # (where, the name it is bound to, what) of each loader
    trainers: list[tuple[tuple[int, int], object]] = []  # (where, the model handed to it) of each trainer built
    aliases: dict[str, str] = {}  # `lora_model` -> `model`: the names a loaded model was wrapped under
    trees = list(_parsed_cells(cells))  # the cells that ran, parsed once for every question below
    code = "\n".join(_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    for cell, tree in enumerate(trees):
        bound = _bound_names(tree)
        aliases.update(_wrapped_names(tree, bound))
        names.update(_class_fields(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, (bool, int, float, str)):
                for target in node.targets:
                    if isinstance(target, (ast.Name, ast.Attribute)) and _dotted(target):
                        names[_dotted(target)] = node.value.value
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "trl":
                trl_names.update(alias.asname or alias.name for alias in node.names)
            elif isinstance(node, ast.Call):
                called.add(_called_name(node.func))
                found = _call_values(node, names, bf16_supported)
                where = (cell, getattr(node, "lineno", 0))
                if _loads_a_model(node):
                    loads.append((where, bound.get(id(node)), {k: found.pop(k) for k in _LOADED_MODEL_KEYS if k in found}))
                if _builds_a_trainer(node):
                    trainers.append((where, _model_handed(node, names)))
                values.update(found)
                trainer = _trl_trainer(node, trl_names)
                if trainer:
                    values["trainer_class"] = trainer
    values.update(_trained_model(loads, trainers, aliases))
    if values.get("model.load_dtype") == "bfloat16" and _BF16_CHANGED_TO_FP16.search(outputs):
        values["model.load_dtype"] = "float16"  # what the run printed beats what the code asked for
    if _trains_whole_model(values, called, trees, code, loaded=bool(loads)):
        values["method"] = "full"
    training_code = "\n".join(_without_inference_autocast(c) for c in cells
                              if isinstance(c, dict) and c.get("cell_type") == "code")
    if "bf16" not in values and "fp16" not in values and _trains_in_default_float32(trees, training_code):
        values["precision.default_fp32"] = True
    elif _trainer_arguments_in_fp32(values, trees, training_code):
        values["precision.trainer_fp32"] = values["training_args_class"]
    unsloth = _unsloth_mixed_precision(values, trees, outputs, bf16_supported)
    if unsloth:
        values["precision.unsloth_mixed"] = unsloth
    autocast = None if "bf16" in values or "fp16" in values else _autocast_precision(trees, names)
    if autocast:
        values["precision.autocast"] = autocast
    built = _model_built_here(cells, trees, code)
    if built and "model.name_or_path" not in values and not any(k.startswith(("adapter.", "quant.")) for k in values):
        values["model.built_here"] = built
    return values


_AUTOCAST_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16"}


def _autocast_precision(trees: list, names: dict) -> str | None:
    """"fp16" / "bf16" where a cell that ran trains in its own loop (`loss.backward()`) under `with autocast(...)`: the
    dtype it names, else its device type's default (float16 on CUDA: `torch.cuda.amp.autocast`, device_type "cuda";
    bfloat16 on the CPU), else fp16 where the cell scales its loss (a GradScaler: only float16 needs one). None where
    no such block is seen, a literal turns it off, or nothing tells (an autocast around `generate` trains nothing)."""
    for tree in trees:
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        if not any(_called_name(call.func) == "backward" for call in calls):
            continue
        scaler = any(_called_name(call.func) == "GradScaler" for call in calls)
        for node in ast.walk(tree):
            items = node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []
            for call in (item.context_expr for item in items):
                if isinstance(call, ast.Call) and _called_name(call.func) == "autocast":
                    return _autocast_dtype(call, names, scaler)
    return None


def _without_inference_autocast(cell: dict) -> str:
    """A cell's code, without its `with autocast(...)` blocks where the cell trains nothing (no backward pass,
    optimizer step, `train` or `fit` call anywhere in it: a `generate` after training): those say nothing of the
    training's precision."""
    source, tree = _source(cell), _quiet_tree(cell)
    if any(isinstance(n, ast.Call) and _called_name(n.func) in _TRAINING_STEPS for n in ast.walk(tree)):
        return source
    lines = source.splitlines()
    for node in ast.walk(tree):
        items = node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []
        if any(isinstance(i.context_expr, ast.Call) and _called_name(i.context_expr.func) == "autocast" for i in items):
            lines[node.lineno - 1:node.end_lineno] = [""] * (node.end_lineno - node.lineno + 1)
    return "\n".join(lines)


_TRAINING_STEPS = ("backward", "step", "train", "fit", "training_step")


def _autocast_dtype(call: ast.Call, names: dict, scaler: bool) -> str | None:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    enabled = keywords.get("enabled")
    if isinstance(enabled, ast.Constant) and enabled.value is False:
        return None
    if "dtype" in keywords:  # `dtype=torch.bfloat16`; a name the code sets elsewhere (`dtype=ptdtype`) is not told
        return _AUTOCAST_DTYPES.get(_called_name(keywords["dtype"]))
    device = keywords.get("device_type", call.args[0] if call.args else None)
    device = names.get(device.id) if isinstance(device, ast.Name) else \
        device.value if isinstance(device, ast.Constant) else None
    if ".cuda." in f".{ast.unparse(call.func)}." or device == "cuda" or scaler:
        return "fp16"
    return "bf16" if device == "cpu" else None


# Unsloth's loader on a GPU without bfloat16 (a T4), given `dtype=torch.bfloat16`: `Device does not support bfloat16.
# Will change to float16.` The model is loaded, and its trainer's mixed precision turned on, in float16.
_BF16_CHANGED_TO_FP16 = re.compile(r"does not support bfloat16\. Will change to float16")
# Unsloth forcing float32 (a model that cannot train in float16: Gemma 3 on a T4)
_UNSLOTH_FLOAT32 = re.compile(r"Unsloth: (?:Switching to float32 training|Using float16 precision for \S+ won't work)")


def _unsloth_mixed_precision(values: dict, trees: list, outputs: str, bf16_supported: bool | None) -> str | None:
    """"fp16" or "bf16" where an Unsloth notebook builds a trainer and turns neither flag on: Unsloth's patched trainer
    then turns on the mixed precision of the model's dtype (`args.fp16 = float16; args.bf16 = not float16` in its
    trainer patch), which is the half dtype the loader asked for, else what the GPU has (its banner's `Bfloat16 =
    TRUE / FALSE`: a T4 loads float16). None where Unsloth said it forced float32, or nothing tells."""
    # (both set False is the same to Unsloth as neither set: it reads `getattr(args, 'bf16', False)`)
    if values.get("bf16") or values.get("fp16") or bf16_supported is None or _UNSLOTH_FLOAT32.search(outputs):
        return None
    if "training_args_class" not in values and "trainer_class" not in values:
        return None
    imports = any(isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "unsloth"
                  for tree in trees for node in ast.walk(tree))
    if not imports:
        return None
    half = values.get("model.load_dtype") or ("bfloat16" if bf16_supported else "float16")
    return "bf16" if half == "bfloat16" else "fp16"


# Calls that load trained weights: anything named for loading (a state dict, `torch.load` under any alias, a saved
# model, the notebook's own `load_weights_into_gpt` / `download_and_load_gpt2`, `clip.load`, safetensors'
# `load_file`) but the data loaders; a pretrained model, a preset, a hub layer, a sentence encoder, a pipeline
_DATA_LOADERS = re.compile(r"(?i)dataset|dataloader|load_data|load_from_disk|load_metric|dotenv|^load_iris|json|yaml|"
                           r"csv|load_text|load_image")
_PRETRAINED_CALLS = ("from_pretrained", "from_preset", "KerasLayer", "SentenceTransformer", "pipeline", "restore")
_MODULE_BASES = ("Module", "Model")  # torch's nn.Module, Keras' Model: a network the notebook defines itself


def _loads_weights(cells: list) -> bool:
    """Whether any code cell, run or not, calls what loads trained weights (`_loads_trained_weights`); a comment
    quoting one, or a method of that name the notebook defines, is no load."""
    everything = [dict(c, execution_count=1) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    return any(isinstance(node, ast.Call) and _loads_trained_weights(node)
               for tree in _parsed_cells(everything) for node in ast.walk(tree))


def _loads_trained_weights(call: ast.Call) -> bool:
    """A call that loads trained weights (see `_DATA_LOADERS`), or asks a model class for its pretrained ones
    (`pretrained=True`, `weights='imagenet'`, torchvision's `weights=ResNet50_Weights...`)."""
    name = _called_name(call.func)
    owner = _owner_name(call.func)
    if name in _PRETRAINED_CALLS or "load" in name.lower() and not _DATA_LOADERS.search(f"{owner}.{name}"):
        return True
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "pretrained" and not (isinstance(value, ast.Constant) and not value.value):
            return True
        if keyword.arg == "weights" and not (isinstance(value, ast.Constant) and value.value is None):
            return True
    return False


def _model_built_here(cells: list, trees: list, code: str) -> str | None:
    """The class a notebook builds its model from where it trains it from random weights: a network it defines
    (`class GPTLanguageModel(nn.Module)`) or Keras' `Sequential([...])`, called in a cell that ran, or a library
    model class given a config (`GPT2LMHeadModel(config)`), and nothing in its code loading trained weights nor
    a program training it (`!python train.py`). None otherwise."""
    if _SHELL_TRAINING.search(code) or _loads_weights(cells):
        return None
    defined = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
               and any(_called_name(base).endswith(_MODULE_BASES) for base in node.bases)}
    own = {name for tree in trees for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
           for name in _own_imports(node)}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _builds_a_model(_called_name(node.func), node, defined, own):
                return _called_name(node.func)
    return None


def _builds_a_model(name: str, call: ast.Call, defined: set[str], own: set[str]) -> bool:
    """A call that builds a network with random weights: a class the notebook defines, Keras' `Sequential` /
    `Model(inputs, outputs)`, or a library's model class handed a config (`GPT2LMHeadModel(config)`)."""
    if name in defined or name in ("Sequential", "Model"):
        return True
    # (a model class of the notebook's own module may load a backbone where the notebook does not show it)
    return bool(_MODEL_CLASSES.search(name)) and name not in own and bool(call.args or call.keywords) \
        and ("For" in name or name.endswith("LMHeadModel"))


# Anything in a notebook's code that trains below float32 or could: autocast and its scaler, half / bfloat16 / float16
# weights or dtypes, the Trainer's and Lightning's precision switches, a quantized load, a dtype set by name
# (a tensor of token ids, `dtype=torch.long`, says nothing of the training's precision)
# (nor anything that sets it out of the code's sight: DeepSpeed's config, an Accelerator's saved config, XLA's
# environment, a precision key in a dict)
_LOWER_PRECISION_WORDS = re.compile(r"(?i)autocast|gradscaler|\.half\(|float16|bfloat16|\bbf16|\bfp16|mixed_precision|"
                                    r"\bamp\b|load_in_[48]bit|torch_dtype|set_default_dtype|precision\s*=|['\"]precision['\"]|\bhalf|"
                                    r"quantiz|bitsandbytes|\bdtype\s*=\s*(?!torch\.(?:long|int\d*|bool|uint8|float32)\b)|"
                                    r"deepspeed|accelerator\s*\(|\bxla\b|xla_|\btpu|set_default_tensor_type")
# A cell that hands the training to a program (`!python train.py`, `!accelerate launch`, `%run train.py`): its
# precision is that program's, which the notebook's code does not show (`!pip install`, `!wget` are no training)
_SHELL_TRAINING = re.compile(r"(?m)^\s*(?:!\s*(?:python3?|torchrun|accelerate|deepspeed|llamafactory-cli|axolotl|tune|"
                             r"litgpt|swift|bash|sh|composer|lightning)\b|%run\b|%%bash|%%sh)")
# The call that trains in the notebook's own code: a hand-written loop's backward pass, Keras' fit
_TRAINING_CALLS = ("backward", "fit")


def _trains_in_default_float32(trees: list, code: str) -> bool:
    """The notebook trains in its own code (a loop's `loss.backward()`, Keras' `model.fit(...)`, a Trainer whose
    arguments it spells out) and nothing in its code, run or not, asks for a precision below float32 or hands the
    training to a program: PyTorch's, Keras' and the Trainer's default, float32 (Karpathy's gpt-dev, a CPU loop)."""
    if _LOWER_PRECISION_WORDS.search(code) or _SHELL_TRAINING.search(code):
        return False
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if any(k.arg is None for c in calls if _configures_training(_called_name(c.func)) for k in c.keywords):
        return False  # a trainer or its arguments built from a dict or a file the code does not show (`**config`)
    if any(_called_name(c.func) in _TRAINING_CALLS and isinstance(c.func, ast.Attribute) for c in calls):
        return True
    arguments = [c for c in calls if _ARGUMENT_CLASSES.match(_called_name(c.func))]
    return any(_called_name(c.func).endswith("Trainer") for c in calls) and bool(arguments)


def _trainer_arguments_in_fp32(values: dict, trees: list, code: str) -> bool:
    """The code builds a Trainer and transformers' TrainingArguments with fp16 and bf16 each absent or False (a TRL
    config with bf16=False said: TRL's configs turn bf16 on where neither flag is given), every precision keyword a
    value the code shows and no `**kwargs`, and nothing in the notebook's code asks for mixed precision another way
    (autocast, a GradScaler, accelerate's or DeepSpeed's mixed_precision, `.half()`, Unsloth, whose trainer turns it
    on, a shell command that trains): the Trainer's default, fp32, as training_args.bin with both off is read."""
    cls = values.get("training_args_class")
    if not isinstance(cls, str) or values.get("fp16") is True or values.get("bf16") is True:
        return False
    if cls.startswith("trl.") and values.get("bf16") is not False:
        return False
    python = "\n".join(line for line in code.splitlines() if not _SHELL_OR_MAGIC.match(line))
    if _MIXED_PRECISION_CODE.search(python) or _SHELL_TRAINING.search(code):
        return False
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if not any(_called_name(c.func).endswith("Trainer") for c in calls):
        return False
    for call in calls:
        name = _called_name(call.func)
        if _configures_training(name) and any(k.arg is None for k in call.keywords):
            return False  # arguments from a dict or a file the code does not show
        if _ARGUMENT_CLASSES.match(name) and any(k.arg in ("fp16", "bf16") and values.get(k.arg) is not False
                                                 for k in call.keywords):
            return False  # a flag set from a value the code does not show
    imports_unsloth = any(isinstance(node, (ast.Import, ast.ImportFrom)) and any(
        (getattr(node, "module", None) or alias.name).split(".")[0] == "unsloth" for alias in node.names)
        for tree in trees for node in ast.walk(tree))
    return not imports_unsloth


# What asks a Trainer's run for a precision below float32 other than its fp16 / bf16 arguments
_MIXED_PRECISION_CODE = re.compile(r"(?i)autocast|gradscaler|mixed_precision|\.half\(|set_default_dtype|"
                                   r"set_default_tensor_type|deepspeed|half_precision_backend|fp16_opt_level|\bamp\b|"
                                   r"\.to\([^()]*\b(?:b?float16|half)\b|\bunsloth\b")


def _configures_training(name: str) -> bool:
    """A trainer, its arguments (TrainingArguments, TRL's configs) or an engine that takes the run's precision: not a
    model's config (`GPTConfig(**sizes)` says nothing of it)."""
    return bool(_ARGUMENT_CLASSES.match(name)) or name.endswith(("Trainer", "initialize", "Accelerator"))


# What any PEFT or quantized set-up leaves in a notebook's code, run or not
_ADAPTER_WORDS = re.compile(r"(?i)peft|lora|adapter|load_in_[48]bit|bitsandbytes|prompt_?tuning|prefix_?tuning|ia3")


def _trains_whole_model(values: dict, called: set[str], trees: list, code: str, loaded: bool) -> bool:
    """The code that ran builds a Trainer around a pre-trained model it loaded (`from_pretrained`, its name a literal
    or not: `config.base_model_name`), or a hand-written loop's optimizer over every parameter of a model the notebook
    loads or builds (`_optimizer_over_a_whole_model`), and nothing in the notebook's code (cells that ran or not) sets
    up an adapter or a quantized base: every weight is trained. A notebook that trains through a shell command
    (`!python train.py --lora ...`) shows no Trainer here."""
    if any(key.startswith(("adapter.", "quant.")) for key in values):
        return False
    python = "\n".join(line for line in code.splitlines() if not _SHELL_OR_MAGIC.match(line))  # (`!pip install
    # bitsandbytes peft` installs a library, it sets up nothing)
    if _ADAPTER_WORDS.search(python) or _model_handed_to_own_code(trees):
        return False
    if loaded and any(name.endswith("Trainer") for name in called) and not _FREEZES.search(python):
        return True
    return _optimizer_over_a_whole_model(trees) and not _FREEZE_CALLS.search(python)


# A torch (or bitsandbytes, or a paper's) optimizer class: what a hand-written loop builds over the weights it trains
_OPTIMIZERS = re.compile(r"(?i)^(?:paged)?(?:adam\w*|sgd|adafactor|lion\w*|rmsprop|adagrad|adadelta|lamb|sophia\w*|muon)$")
_FREEZE_CALLS = re.compile(r"\bfreeze_(?!support)\w*\(|\.freeze\(")
_PARAMETERS = ("parameters", "named_parameters")
_MOVES = ("to", "cuda", "train", "float", "half", "bfloat16")  # `GPT(config).to(device)`: the same model


def _optimizer_over_a_whole_model(trees: list) -> bool:
    """An optimizer built over every parameter of a model the notebook loads or builds (`AdamW(model.parameters(),
    ...)`, the model from `from_pretrained` or a model class), and no weight of that model set aside
    (`requires_grad = False` on it, or on weights the code cannot tie to a model), and no model class of the notebook's
    own that keeps part of itself out of the gradient in `forward` (`_forward_stops_gradient`). Freezing another
    model, a DPO reference's `for p in ref_model.parameters(): p.requires_grad = False`, leaves the trained one
    whole."""
    models = _models_made(trees)
    trained = {name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)
               and _OPTIMIZERS.match(_called_name(node.func)) for name in [_all_parameters_of(node)] if name}
    trained &= models
    return bool(trained) and not _frozen_models(trees, models) & (trained | {None}) \
        and not _forward_stops_gradient(trees)


_NO_GRAD = ("no_grad", "inference_mode")


def _forward_stops_gradient(trees: list) -> bool:
    """Whether a model class of the notebook's own runs part of its `forward` outside the gradient: under `with
    torch.no_grad()` / `torch.inference_mode()`, or through `.detach()` (a probe over a pre-trained encoder whose
    optimizer over `model.parameters()` trains the head alone). A `generate` under `no_grad` trains nothing and is
    left out."""
    for tree in trees:
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for forward in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"):
                for node in ast.walk(forward):
                    if isinstance(node, ast.With) and any(isinstance(item.context_expr, ast.Call)
                                                          and _called_name(item.context_expr.func) in _NO_GRAD
                                                          for item in node.items):
                        return True
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
                        return True
    return False


def _all_parameters_of(call: ast.Call) -> str | None:
    """`model` of `AdamW(model.parameters(), ...)` or `AdamW(params=model.parameters())`."""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Attribute) and given.func.attr == "parameters" \
            and isinstance(given.func.value, ast.Name) and not given.args:
        return given.func.value.id
    return None


def _models_made(trees: list) -> set[str]:
    """The names the notebook binds to a model it loads, builds from a model class (its own `class GPT(nn.Module)`
    or a library's `GPT2LMHeadModel(config)`) or copies (`copy.deepcopy(model)`), `.to(device)` and the like
    aside."""
    classes = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    made = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                call = node.value
                while isinstance(call.func, ast.Attribute) and call.func.attr in _MOVES \
                        and isinstance(call.func.value, ast.Call):
                    call = call.func.value
                name = _called_name(call.func)
                if _loads_a_model(call) or name in classes or name == "deepcopy" or _MODEL_CLASSES.search(name):
                    made |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return made


def _frozen_models(trees: list, models: set[str]) -> set[str | None]:
    """The models some of whose weights the code sets aside from training (`for p in X.parameters(): p.requires_grad
    = False`, `X.requires_grad_(False)`, `X.lm_head.weight.requires_grad = False`); None for a freeze the code does
    not tie to one of `models`."""
    frozen: set[str | None] = set()
    looped: set[int] = set()  # the freezes inside a loop over a model's parameters, told by that loop
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr in _PARAMETERS:
                inner = [n for n in ast.walk(node) if _sets_aside(n)]
                if inner:
                    root = _root_name(node.iter.func.value)
                    frozen.add(root if root in models else None)
                    looped |= {id(n) for n in inner}
    for tree in trees:
        for node in ast.walk(tree):
            if _sets_aside(node) and id(node) not in looped:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.func
                root = _root_name(target)
                frozen.add(root if root in models else None)
    return frozen


def _sets_aside(node: ast.AST) -> bool:
    """`x.requires_grad = False` or `x.requires_grad_(False)`, or either given a value the code computes (`= 'lm_head'
    in name`, `= flag`, `requires_grad_(train_backbone)`), which sets weights aside wherever it is False; only a
    literal True (or `requires_grad_()`) sets nothing aside."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets) \
            and not _literally_true(node.value)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_"):
        return False
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "requires_grad"), None)
    return given is not None and not _literally_true(given)


def _literally_true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


# Weights set aside from training: `param.requires_grad = False`, `.requires_grad_(False)`, a freeze helper
_FREEZES = re.compile(r"requires_grad\s*=\s*False|requires_grad_\(\s*False|\bfreeze_(?!support)\w*\(|\.freeze\(")
# What a notebook may import without its model leaving sight: the libraries of training, data and plotting. A module
# of its own (`from src.model_utils import prepare_model`) may wrap the model in an adapter the notebook never shows.
_KNOWN_PACKAGES = ("transformers", "torch", "datasets", "trl", "accelerate", "evaluate", "numpy", "pandas", "sklearn",
                   "tqdm", "matplotlib", "seaborn", "scipy", "os", "sys", "json", "re", "math", "random", "time",
                   "collections", "typing", "pathlib", "itertools", "functools", "warnings", "wandb",
                   "huggingface_hub", "tokenizers", "nltk", "IPython", "google", "kaggle_secrets", "yaml", "gc",
                   "datetime", "string", "pprint", "logging", "shutil", "glob", "csv", "dataclasses", "copy",
                   "sentencepiece", "unsloth", "rouge_score", "sacrebleu", "torchinfo", "torchsummary", "thop",
                   "ptflops", "fvcore", "mlflow", "deepspeed", "safetensors", "einops", "psutil", "pynvml", "GPUtil",
                   "multiprocessing", "pickle", "optuna")


def _model_handed_to_own_code(trees: list) -> bool:
    """The model a cell loaded (`model = X.from_pretrained(...)`) is passed to a function the notebook imports from a
    module of its own (`model = prepare_model(model, cfg)`), which may wrap it in an adapter out of sight."""
    own: set[str] = set()
    models: set[str] = set()
    calls: list[ast.Call] = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                own |= _own_imports(node)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _loads_a_model(node.value):
                models |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.Call):
                calls.append(node)
    return any(_root_name(call.func) in own and any(isinstance(a, ast.Name) and a.id in models
                                                    for a in [*call.args, *(k.value for k in call.keywords)])
               for call in calls)


def _own_imports(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import binds from a module that is no known library (a relative import is always the notebook's
    own code)."""
    if isinstance(node, ast.ImportFrom):
        known = node.level == 0 and (node.module or "").split(".")[0] in _KNOWN_PACKAGES
        return set() if known else {alias.asname or alias.name for alias in node.names}
    return {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] not in _KNOWN_PACKAGES}


def _root_name(func: ast.expr) -> str:
    """`prepare_model` of `prepare_model(...)`, `utils` of `utils.prepare(...)`."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else ""


def _source(cell: dict) -> str:
    """A cell's code: a list of lines (nbformat 4's `source`, nbformat 3's `input`) or one string."""
    source = cell.get("source", cell.get("input"))
    return "".join(part for part in source if isinstance(part, str)) if isinstance(source, list) else \
        source if isinstance(source, str) else ""


def shell_commands(cells: list) -> str:
    """The shell lines of the cells that ran (`!python train.py \\` and the lines it continues on), without the `!`."""
    lines: list[str] = []
    for cell in _cells_that_ran(cells):
        continued = False
        for line in _source(cell).splitlines():
            shell = line.lstrip().startswith("!")
            if shell or continued:
                lines.append(line.lstrip()[1:] if shell else line)
            continued = (shell or continued) and line.rstrip().endswith("\\")
    return "\n".join(lines)


def _cells_that_ran(cells: list) -> list[dict]:
    """Code cells with an execution count or an output; where the notebook was saved with every count cleared (some
    editors and export tools do), every code cell up to the last one that shows an output; where only some cells
    lost their counts (the cells after a few counted ones), also the uncounted cells without output just before an uncounted one that shows an output, back to a counted cell or to
    one that would have shown something had it run (a print, a value on its last line): those ran too, printing
    nothing (a model loaded, a config built, before the training cell whose table shows)."""
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    if not any(_count(c) is not None for c in code):  # every count cleared: all up to the last cell that shows
        shown = [i for i, c in enumerate(code) if c.get("outputs")]
        return code[: shown[-1] + 1] if shown else []
    ran = {i for i, c in enumerate(code) if _count(c) is not None or c.get("outputs")}
    for i, cell in enumerate(code):
        if _count(cell) is not None or not cell.get("outputs"):
            continue
        j = i - 1
        while j >= 0 and _count(code[j]) is None and not code[j].get("outputs") and not _would_show(code[j]):
            ran.add(j)
            j -= 1
    ran |= _sole_definers_of_names_read_later(code, ran)
    return [c for i, c in enumerate(code) if i in ran]


def _sole_definers_of_names_read_later(code: list[dict], ran: set[int]) -> set[int]:
    """Uncounted cells without output that alone assign a name a later counted cell reads (the arguments built in a
    cell edited after it ran, then handed to the training cell): had they not run, that cell would have stopped on
    a NameError before its output. (Where the later cells lost their counts too, the rule of `_cells_that_ran` for
    them stands: a silent cell that would have printed says the cells before it did not run.)"""
    trees = [_quiet_tree(cell) for cell in code]
    assigned = [_assigned_names(tree) for tree in trees]
    read = [{n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} for tree in trees]
    found = set()
    for i, names in enumerate(assigned):
        if i in ran or not names:
            continue
        sole = {name for name in names if not any(name in other for k, other in enumerate(assigned) if k != i)}
        if any(_count(code[j]) is not None and sole & read[j] for j in range(i + 1, len(code))):
            found.add(i)
    return found


def _quiet_tree(cell: dict) -> ast.Module:
    code = "\n".join("" if _SHELL_OR_MAGIC.match(line) else line for line in _source(cell).splitlines())
    try:
        return parse_quietly(code)
    except (SyntaxError, ValueError, RecursionError):
        return ast.Module(body=[], type_ignores=[])


def _assigned_names(tree: ast.Module) -> set[str]:
    """The names a cell's top-level statements assign (`args = TrainingArguments(...)`) or define (`class CONFIG:`)."""
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    targets += [node.target for node in tree.body if isinstance(node, ast.AnnAssign)]
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    return {t.id for t in targets if isinstance(t, ast.Name)} | classes


def _would_show(cell: dict) -> bool:
    """Whether a cell shows something when it runs: a print or display call, or a value on its last line (Jupyter
    shows it). A cell that does not parse is taken to (nothing is assumed to have run silently)."""
    source = _source(cell)
    code = "\n".join("" if _SHELL_OR_MAGIC.match(line) else line for line in source.splitlines())
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return True
    return any(isinstance(node, ast.Call) and _called_name(node.func) in ("print", "display", "pprint")
               for node in ast.walk(tree))


def _count(cell: dict):
    """A cell's execution count (nbformat 3 named it `prompt_number`)."""
    return cell.get("execution_count", cell.get("prompt_number"))


def _parsed_cells(cells: list):
    """The trees of the cells that ran, with the script a `%%writefile train.py` cell writes where a shell line
    that ran launches it (`!accelerate launch train.py`): that code ran too."""
    launched = {name.rsplit("/", 1)[-1] for name in _SCRIPT.findall(shell_commands(cells))}
    for cell in _cells_that_ran(cells):
        source = _source(cell)
        written = _WRITEFILE.match(source)
        if written and written.group(1).rsplit("/", 1)[-1] in launched:
            source = source.partition("\n")[2]
        if len(source) > _MAX_CELL_CHARS or _NOT_PYTHON_CELL.match(source):
            continue
        code = "\n".join("" if _SHELL_OR_MAGIC.match(line) else line for line in source.splitlines())
        try:
            tree = _DeadBranches().visit(parse_quietly(code))
        except (SyntaxError, ValueError, RecursionError):
            continue  # a cell of another language, or one that never parsed: it says nothing here
        yield tree


_WRITEFILE = re.compile(r"\s*%%writefile[ \t]+(?:-a[ \t]+)?(\S+\.py)[ \t]*(?:\n|$)")
_SCRIPT = re.compile(r"(?<![\w.-])([\w./-]+\.py)(?![\w.])")


def parse_quietly(code: str, mode: str = "exec") -> ast.AST:
    """`ast.parse` of someone else's code with the warnings its compiler gives silenced (`invalid escape sequence
    '\\s'` in a user's regex is a DeprecationWarning, a SyntaxWarning from Python 3.12): the analysis reads the code,
    it does not run or fix it, and must not warn, nor, under `-W error`, lose the cell."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code, mode=mode)


class _DeadBranches(ast.NodeTransformer):
    """A tree without the branches that never run: Unsloth's templates keep their reload-for-inference code under
    `if False:` (`model_name = "lora_model"`), which names no model the run trained."""

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node


# TRL's trainers: the class a notebook builds its trainer from says TRL ran it, and which objective, where the
# arguments it passes are the Trainer's plain TrainingArguments (TRL 0.8's SFTTrainer took them, and its own
# max_seq_length / packing as keywords)
_TRL_TRAINERS = re.compile(r"^(?:SFT|DPO|KTO|ORPO|CPO|GRPO|RLOO|PPO|Reward|GKD|BCO|OnlineDPO|Nash|XPO|PRM)Trainer$")


def _trl_trainer(call: ast.Call, trl_names: set[str]) -> str | None:
    """`trl.SFTTrainer` where the call builds one of TRL's trainers, imported from trl (`from trl import SFTTrainer`)
    or named through it (`trl.SFTTrainer(...)`); a class of the notebook's own that shares the name is not TRL's."""
    name = _called_name(call.func)
    if not _TRL_TRAINERS.match(name):
        return None
    through_trl = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
        and call.func.value.id == "trl"
    return f"trl.{name}" if name in trl_names or through_trl else None


def _call_values(call: ast.Call, names: dict, bf16_supported: bool | None) -> dict:
    name = _called_name(call.func)
    owner = _owner_name(call.func)
    out: dict = {}
    if _ARGUMENT_CLASSES.match(name):
        out["training_args_class"] = ("trl." + name) if _TRL_CLASSES.search(name) else name
        for field in _TRAINING_FIELDS:
            value = _keyword(call, field, names, bf16_supported)
            if value is not None:
                out[field] = value
    elif name in _PEFT_CONFIGS or name in _PEFT_BUILDERS and _keyword(call, "r", names, None) is not None:
        out["adapter.peft_type"] = _PEFT_CONFIGS.get(name, "LORA")
        rank = _keyword(call, "r", names, None)
        if isinstance(rank, int):
            out["adapter.r"] = rank
        task = next((k.value for k in call.keywords if k.arg == "task_type"), None)
        task = task.attr if isinstance(task, ast.Attribute) else _literal(task, names) if task is not None else None
        if isinstance(task, str):  # `TaskType.CAUSAL_LM` or "CAUSAL_LM"
            out["adapter.task_type"] = task
    elif _loads_a_model(call):
        model = _model_name(call, names)
        if model:
            out["model.name_or_path"] = model
        dtype = _half_dtype(call)
        if dtype:
            out["model.load_dtype"] = dtype
        if "For" in owner:  # the head it loads (AutoModelForSequenceClassification: a classifier's)
            out["model.architectures"] = [owner]
    if name == "BitsAndBytesConfig" or _loads_a_model(call):
        if _keyword(call, "load_in_4bit", names, None) is True:
            out["quant.load_in_4bit"] = True
    elif name in _WEIGHT_QUANT_CONFIGS:  # `GPTQConfig(bits=4, ...)`: the base loaded from 4-bit GPTQ / AWQ weights
        bits = _keyword(call, "bits", names, None)
        if isinstance(bits, int) and not isinstance(bits, bool):
            out["quant.bits"], out["quant.quant_method"] = bits, _WEIGHT_QUANT_CONFIGS[name]
    return out


# transformers' configs of a base quantized ahead of training (its weights stored in `bits` bits)
_WEIGHT_QUANT_CONFIGS = {"GPTQConfig": "gptq", "AwqConfig": "awq"}


_LOADED_MODEL_KEYS = ("model.name_or_path", "model.load_dtype", "model.architectures")


def _trained_model(loads: list, trainers: list, aliases: dict[str, str]) -> dict:
    """What the loader of the model the notebook trains said: of the loaders called before the first trainer is built,
    the last one bound to the name handed to it as its model, through the names it was wrapped under
    (`lora_model = get_peft_model(model, ...)`), or the model's name handed as a string (`GRPOTrainer(model="Qwen/...")`);
    not a model tried first and replaced (`del model`), a critic or reward model loaded beside it, or a reload after
    training (in float16 to merge the adapter, or to try it). Else the last loader before the trainer, else the
    first one called."""
    if not loads:
        handed = next((h for _, h in sorted(trainers, key=lambda t: t[0]) if isinstance(h, str)), None)
        return {"model.name_or_path": handed} if handed else {}
    if not trainers:
        return loads[0][2]
    # the first trainer handed a model (Unsloth's `PatchDPOTrainer()` builds none)
    at, handed = min([t for t in trainers if t[1]] or trainers, key=lambda t: t[0])
    if isinstance(handed, str):
        return {"model.name_or_path": handed}
    before = [(name, what) for where, name, what in loads if where <= at]
    bound = {name for name, _ in before}
    root = next((r for r in (_loaded_as(n, aliases) for n in handed or ()) if r in bound), None)
    named = [what for name, what in before if root is not None and name == root]
    return named[-1] if named else before[-1][1] if before else loads[0][2]


def _loaded_as(name: str, aliases: dict[str, str]) -> str:
    """The name a model was loaded under, through the names it was wrapped under since (`lora_model` -> `model`)."""
    seen = {name}
    while name in aliases and aliases[name] not in seen:
        name = aliases[name]
        seen.add(name)
    return name


def _bound_names(tree: ast.AST) -> dict[int, str]:
    """The name each call's result is bound to (`model, tokenizer = X.from_pretrained(...)`: `model`), by call."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.targets:
            target = node.targets[0]
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(first, ast.Name):
                out[id(node.value)] = first.id
    return out


def _wrapped_names(tree: ast.AST, bound: dict[int, str]) -> dict[str, str]:
    """`lora_model = get_peft_model(model, config)`: the new name of a model a call wrapped (its first argument, or its
    `model=`), by that name."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) in bound:
            arg = next((k.value for k in node.keywords if k.arg == "model"), node.args[0] if node.args else None)
            if isinstance(arg, ast.Name) and arg.id != bound[id(node)]:
                out[bound[id(node)]] = arg.id
    return out


def _model_handed(call: ast.Call, names: dict) -> str | tuple[str, ...] | None:
    """What a trainer is handed as its model: the model's name where it is a string (`model="Qwen/..."`), else the
    names it could be (its `model=`, or its positional arguments: TRL 0.x's `PPOTrainer(config, model, ...)`)."""
    keyword = next((k.value for k in call.keywords if k.arg == "model"), None)
    if keyword is not None:
        literal = _literal(keyword, names) if not isinstance(keyword, ast.Name) or keyword.id in names else None
        if isinstance(literal, str) and literal:
            return literal
        return (keyword.id,) if isinstance(keyword, ast.Name) else None
    positional = tuple(a.id for a in call.args if isinstance(a, ast.Name))
    return positional or None


def _builds_a_trainer(call: ast.Call) -> bool:
    """`Trainer(...)`, `SFTTrainer(...)`, `Seq2SeqTrainer(...)`, `UnslothTrainer(...)`: a trainer class built."""
    name = _called_name(call.func)
    return name[:1].isupper() and name.endswith("Trainer")


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _owner_name(func: ast.expr) -> str:
    """`FastLanguageModel` of `FastLanguageModel.from_pretrained(...)`; '' for a bare call."""
    return _called_name(func.value) if isinstance(func, ast.Attribute) else ""


def _loads_a_model(call: ast.Call) -> bool:
    """`AutoModelForCausalLM.from_pretrained(...)`, `FastLanguageModel.from_pretrained(...)`: a model class's loader
    (a tokenizer's is not)."""
    return _called_name(call.func) in _LOADERS and bool(_MODEL_CLASSES.search(_owner_name(call.func)))


def _half_dtype(call: ast.Call) -> str | None:
    """"bfloat16" or "float16" where a loader is asked for its weights in half precision (`torch_dtype=torch.bfloat16`,
    `dtype="float16"`), else None."""
    value = next((k.value for k in call.keywords if k.arg in ("torch_dtype", "dtype")), None)
    name = value.attr if isinstance(value, ast.Attribute) else value.value if isinstance(value, ast.Constant) else None
    return {"bfloat16": "bfloat16", "float16": "float16", "half": "float16"}.get(name) if isinstance(name, str) else None


def _model_name(call: ast.Call, names: dict) -> str | None:
    for node in call.args[:1] + [k.value for k in call.keywords if k.arg in ("model_name", "pretrained_model_name_or_path")]:
        value = _literal(node, names)
        if isinstance(value, str) and value:
            return value
    return None


def _keyword(call: ast.Call, field: str, names: dict, bf16_supported: bool | None):
    node = next((k.value for k in call.keywords if k.arg == field), None)
    if node is None:
        return None
    if bf16_supported is not None and _asks_bf16_support(node):
        return bf16_supported
    if bf16_supported is not None and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) \
            and _asks_bf16_support(node.operand):
        return not bf16_supported
    return _literal(node, names)


def _dotted(node: ast.expr) -> str | None:
    """`bf16` of a name, `CONFIG.bf16` of a class's (or an object's) field read through its name; else None."""
    if isinstance(node, ast.Name):
        return node.id
    return f"{node.value.id}.{node.attr}" if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        else None


def _class_fields(tree: ast.Module) -> dict:
    """`{"CONFIG.bf16": True}` of the literal fields a cell's classes set in their body (a settings dataclass,
    `bf16: bool = True`), read where the code passes `CONFIG.bf16`."""
    out = {}
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for node in cls.body:
            target = node.target if isinstance(node, ast.AnnAssign) else \
                node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and isinstance(value, ast.Constant) \
                    and isinstance(value.value, (bool, int, float, str)):
                out[f"{cls.name}.{target.id}"] = value.value
    return out


def _asks_bf16_support(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _called_name(node.func) in _BF16_SUPPORT


def _literal(node: ast.expr, names: dict):
    if isinstance(node, (ast.Name, ast.Attribute)) and _dotted(node) in names:
        return names[_dotted(node)]
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return value if isinstance(value, (bool, int, float, str)) else None
