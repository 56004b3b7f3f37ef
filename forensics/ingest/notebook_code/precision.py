"""What a notebook's code and outputs say of the training's precision where no fp16 / bf16 flag is passed: a
hand-written loop's autocast, a loop or a Trainer that asks for nothing below float32, the mixed precision
Unsloth's trainer turns on (and its printed fallback from bfloat16 to float16)."""
from __future__ import annotations

import ast
import re

from .syntax import called_name
from .cells import SHELL_OR_MAGIC, SHELL_TRAINING, quiet_tree, _source, without_comments
from .arguments import ARGUMENT_CLASSES

_AUTOCAST_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16"}


def autocast_precision(trees: list, names: dict) -> str | None:
    """"fp16" / "bf16" where a cell that ran trains in its own loop (`loss.backward()`) under `with autocast(...)`: the
    dtype it names, else its device type's default (float16 on CUDA: `torch.cuda.amp.autocast`, device_type "cuda";
    bfloat16 on the CPU), else fp16 where the cell scales its loss (a GradScaler: only float16 needs one). None where
    no such block is seen, a literal turns it off, or nothing tells (an autocast around `generate` trains nothing)."""
    for tree in trees:
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        if not any(called_name(call.func) == "backward" for call in calls):
            continue
        scaler = any(called_name(call.func) == "GradScaler" for call in calls)
        for node in ast.walk(tree):
            items = node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []
            for call in (item.context_expr for item in items):
                if isinstance(call, ast.Call) and called_name(call.func) == "autocast":
                    return _autocast_dtype(call, names, scaler, trees)
    return None


# Keras' mixed-precision policies (`keras.mixed_precision.set_global_policy("mixed_float16")`, TF 2.1-2.3's
# `mixed_precision.experimental.set_policy`, a `Policy("mixed_bfloat16")` handed to them): every layer built after it
# computes in the half type, its variables kept in float32, and fit scales the loss for float16
_KERAS_POLICIES = {"mixed_float16": "fp16", "mixed_bfloat16": "bf16"}
_SET_POLICY = ("set_global_policy", "set_policy")


def keras_policy_precision(trees: list) -> str | None:
    """"fp16" / "bf16" where a cell that ran sets Keras' global policy to mixed float16 / bfloat16 (BMunitiz_NLP's
    KerasHub GPT, `mixed_float16` set before the model is built); the last one set stands. None where none is set."""
    found = None
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and called_name(node.func) in _SET_POLICY and node.args:
                given = node.args[0]
                if isinstance(given, ast.Call) and called_name(given.func) == "Policy" and given.args:
                    given = given.args[0]
                if isinstance(given, ast.Constant) and isinstance(given.value, str):
                    found = _KERAS_POLICIES.get(given.value) or None
    return found


def without_inference_autocast(cell: dict) -> str:
    """A cell's code, without its `with autocast(...)` blocks where the cell trains nothing (no backward pass,
    optimizer step, `train` or `fit` call anywhere in it: a `generate` after training): those say nothing of the
    training's precision."""
    source, tree = _source(cell), quiet_tree(cell)
    if any(isinstance(n, ast.Call) and called_name(n.func) in _TRAINING_STEPS for n in ast.walk(tree)):
        return source
    lines = source.splitlines()
    for node in ast.walk(tree):
        items = node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []
        if any(isinstance(i.context_expr, ast.Call) and called_name(i.context_expr.func) == "autocast" for i in items):
            lines[node.lineno - 1:node.end_lineno] = [""] * (node.end_lineno - node.lineno + 1)
    return "\n".join(lines)


_TRAINING_STEPS = ("backward", "step", "train", "fit", "training_step")


def _autocast_dtype(call: ast.Call, names: dict, scaler: bool, trees: list) -> str | None:
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    enabled = keywords.get("enabled")
    if isinstance(enabled, ast.Constant) and enabled.value is False:
        return None
    if "dtype" in keywords:  # `dtype=torch.bfloat16`, or a name the code binds to that one dtype only
        given = keywords["dtype"]
        return _dtype_of_name(given.id, trees) if isinstance(given, ast.Name) else \
            _AUTOCAST_DTYPES.get(called_name(given))
    device = keywords.get("device_type", call.args[0] if call.args else None)
    device = names.get(device.id) if isinstance(device, ast.Name) else \
        device.value if isinstance(device, ast.Constant) else None
    if ".cuda." in f".{ast.unparse(call.func)}." or device == "cuda" or scaler:
        return "fp16"
    return "bf16" if device == "cpu" else None


def _dtype_of_name(name: str, trees: list) -> str | None:
    """The half type every assignment of `name` in the code binds (netra-ai-lab_Netra-NMT's main() sets `amp_dtype =
    torch.bfloat16` and hands it to the loop's `autocast(dtype=amp_dtype)`); None where one binds anything else - a
    choice (nanoGPT's `ptdtype = {...}[dtype]`), a second dtype - or none binds it: which one trained is not said. A
    binding of another form (unpacked, annotated, a loop's target) is not read, so it leaves the name unsaid too."""
    nodes = [node for tree in trees for node in ast.walk(tree)]
    assigned = [node.value for node in nodes if isinstance(node, ast.Assign)
                and any(isinstance(target, ast.Name) and target.id == name for target in node.targets)]
    stores = sum(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store) for node in nodes)
    bound = {_AUTOCAST_DTYPES.get(called_name(value)) if isinstance(value, ast.Attribute) else None
             for value in assigned}
    return bound.pop() if len(bound) == 1 and stores == len(assigned) else None


# Unsloth's loader on a GPU without bfloat16 (a T4), given `dtype=torch.bfloat16`: `Device does not support bfloat16.
# Will change to float16.` The model is loaded, and its trainer's mixed precision turned on, in float16.
BF16_CHANGED_TO_FP16 = re.compile(r"does not support bfloat16\. Will change to float16")
# bitsandbytes' MatMul8bitLt warns (once per process) with the dtype of the activations its int8 layers are given:
# `warnings.warn(f"MatMul8bitLt: inputs will be cast from {A.dtype} to float16 during quantization")`
_INT8_INPUTS = re.compile(r"MatMul8bitLt: inputs will be cast from torch\.(\w+)")


def int8_inputs_in_float32(outputs: str) -> bool:
    """Whether every MatMul8bitLt warning the outputs hold says float32 activations entered the int8 layers: the half
    weights around them (norms, embeddings) were cast to float32 - what peft's `prepare_model_for_kbit_training` does
    ('cast all non INT8 parameters to fp32'), and TRL's SFTTrainer (0.4.2 to 0.24; 0.25's own copy casts norms only,
    0.26's nothing) runs it itself on an 8-bit / 4-bit model handed a peft_config (sft_trainer.py: `if getattr(model,
    "is_loaded_in_8bit", False) or ...: model = prepare_model_for_kbit_training(model, ...)`). A model left in
    bfloat16 warns 'from torch.bfloat16'."""
    dtypes = set(_INT8_INPUTS.findall(outputs))
    return dtypes == {"float32"}


# Unsloth forcing float32 (a model that cannot train in float16: Gemma 3 on a T4)
_UNSLOTH_FLOAT32 = re.compile(r"Unsloth: (?:Switching to float32 training|Using float16 precision for \S+ won't work)")


def unsloth_mixed_precision(values: dict, trees: list, outputs: str, bf16_supported: bool | None) -> str | None:
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


# Anything in a notebook's code that trains below float32 or could: autocast and its scaler, half / bfloat16 / float16
# weights or dtypes, the Trainer's and Lightning's precision switches, a quantized load, a dtype set by name
# (a tensor of token ids, `dtype=torch.long` or TensorFlow's `dtype=tf.int32` or Keras' `Input(..., dtype="int32")`
# (sotetsuk_LectureColab), says nothing of the training's precision,
# nor a dtype copied from a tensor, `dtype=logits.dtype`: Asocsar_GPT2's sampling cells; the spaces after `=` are
# inside the lookahead, else `dtype = torch.long` backtracks to no space and escapes it: bmcmahan2016_cs-269-SLG;
# nor float32 by its other names, `torch.float` and the wider `torch.float64` / `torch.double`: GW-S_tranform_pytorch's
# `torch.rsqrt(torch.tensor(self.hidden_size, dtype=torch.float))` in its attention)
# (nor anything that sets it out of the code's sight: DeepSpeed's config, an Accelerator's saved config, XLA's
# environment, a precision key in a dict)
LOWER_PRECISION_WORDS = re.compile(
    r"(?i)autocast|gradscaler|\.half\(|float16|bfloat16|\bbf16|\bfp16|mixed_precision|"
    r"\bamp\b|load_in_[48]bit|torch_dtype|set_default_dtype|precision\s*=|['\"]precision['\"]|\bhalf|"
    r"quantiz|bitsandbytes|\bdtype\s*=(?!\s*(?:(?:torch|tf|np|numpy)\.(?:long|int\d*|bool|"
    r"uint8|float(?:32|64)?|double)\b|[\w.]+\.dtype\b|['\"](?:u?int\d{0,2}|bool|float32)['\"]))|"
    r"deepspeed|accelerator\s*\(|\bxla\b|xla_|\btpu|set_default_tensor_type")
# The call that trains in the notebook's own code: a hand-written loop's backward pass, Keras' fit, a TensorFlow
# GradientTape loop's update (AaronBarbosa12_transformer_model: `optimizer.apply_gradients(zip(grads, ...))`)
_TRAINING_CALLS = ("backward", "fit", "apply_gradients")


# `torch.set_default_tensor_type(torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)`: a
# FloatTensor is float32 on either device (torch's HalfTensor / BFloat16Tensor are the half types), so such a call asks
# for no lower precision (AananthV_Pytorch-Transformer); one naming any other type, or a type the code computes, does
_FLOAT32_DEFAULT_TYPE = re.compile(r"[\w.]*\bset_default_tensor_type\(((?:\s|[\w.'\"]|\bif\b|\belse\b|\(\))*)\)")
_TENSOR_TYPES = re.compile(r"\w*Tensor\b")


def _without_float32_default_type(code: str) -> str:
    """`code` with the calls that set torch's default tensor type to a float32 one (`_FLOAT32_DEFAULT_TYPE`) left
    out."""
    return _FLOAT32_DEFAULT_TYPE.sub(lambda m: "" if _only_float32_types(m.group(1)) else m.group(0), code)


def _only_float32_types(argument: str) -> bool:
    named = _TENSOR_TYPES.findall(argument)
    return bool(named) and all(name == "FloatTensor" for name in named)


def trains_in_its_own_code(calls: list[ast.Call]) -> bool:
    """A call among `calls` that trains in the code itself (`_TRAINING_CALLS`: `loss.backward()`, `model.fit(...)`)."""
    return any(called_name(c.func) in _TRAINING_CALLS and isinstance(c.func, ast.Attribute) for c in calls)


def trains_in_default_float32(trees: list, code: str) -> bool:
    """The notebook trains in its own code (a loop's `loss.backward()`, Keras' `model.fit(...)`, a Trainer whose
    arguments it spells out) and nothing in its code, run or not, asks for a precision below float32 or hands the
    training to a program: PyTorch's, Keras' and the Trainer's default, float32 (Karpathy's gpt-dev, a CPU loop)."""
    if LOWER_PRECISION_WORDS.search(_without_float32_default_type(without_comments(code))) \
            or SHELL_TRAINING.search(code):
        return False
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if any(k.arg is None for c in calls if _configures_training(called_name(c.func)) for k in c.keywords):
        return False  # a trainer or its arguments built from a dict or a file the code does not show (`**config`)
    if trains_in_its_own_code(calls):
        return True
    arguments = [c for c in calls if ARGUMENT_CLASSES.match(called_name(c.func))]
    return any(called_name(c.func).endswith("Trainer") for c in calls) and bool(arguments)


def trainer_arguments_in_fp32(values: dict, trees: list, code: str) -> bool:
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
    python = "\n".join(line for line in code.splitlines() if not SHELL_OR_MAGIC.match(line))
    if _MIXED_PRECISION_CODE.search(_without_float32_default_type(python)) or SHELL_TRAINING.search(code):
        return False
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    if not any(called_name(c.func).endswith("Trainer") for c in calls):
        return False
    for call in calls:
        name = called_name(call.func)
        if _configures_training(name) and any(k.arg is None for k in call.keywords):
            return False  # arguments from a dict or a file the code does not show
        if ARGUMENT_CLASSES.match(name) and any(k.arg in ("fp16", "bf16") and values.get(k.arg) is not False
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
    return bool(ARGUMENT_CLASSES.match(name)) or name.endswith(("Trainer", "initialize", "Accelerator"))
