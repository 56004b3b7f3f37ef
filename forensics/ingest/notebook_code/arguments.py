"""The arguments a notebook's code passes: the keywords of its TrainingArguments / TRL configs, PEFT configs, loaders
and quantization configs (literal values, Unsloth's `is_bfloat16_supported()`), the TRL trainer it builds, and
which loaded model is the one handed to the trainer."""
from __future__ import annotations

import ast
import re

from .machine import PrintedMachine
from .syntax import called_name, dotted, literal_value, owner_name

# Arguments classes whose keywords are TrainingArguments fields (TRL's configs subclass it, Unsloth's too)
ARGUMENT_CLASSES = re.compile(r"^(?:\w*TrainingArguments|(?:SFT|DPO|KTO|ORPO|CPO|GRPO|RLOO|PPO|Reward|GKD|BCO|"
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
MODEL_CLASSES = re.compile(r"(?:Model|For[A-Z]\w*)$|^AutoModel")
_BF16_SUPPORT = ("is_bfloat16_supported", "is_bf16_supported")
_NO_MACHINE = PrintedMachine()


# TRL's trainers: the class a notebook builds its trainer from says TRL ran it, and which objective, where the
# arguments it passes are the Trainer's plain TrainingArguments (TRL 0.8's SFTTrainer took them, and its own
# max_seq_length / packing as keywords)
_TRL_TRAINERS = re.compile(r"^(?:SFT|DPO|KTO|ORPO|CPO|GRPO|RLOO|PPO|Reward|GKD|BCO|OnlineDPO|Nash|XPO|PRM)Trainer$")


def trl_trainer(call: ast.Call, trl_names: set[str]) -> str | None:
    """`trl.SFTTrainer` where the call builds one of TRL's trainers, imported from trl (`from trl import SFTTrainer`)
    or named through it (`trl.SFTTrainer(...)`); a class of the notebook's own that shares the name is not TRL's."""
    name = called_name(call.func)
    if not _TRL_TRAINERS.match(name):
        return None
    through_trl = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
        and call.func.value.id == "trl"
    return f"trl.{name}" if name in trl_names or through_trl else None


# A switch of a trainer's keyword arguments held in a dict (DSPy's GRPO hands Arbor `train_kwargs = {..., "lora":
# True}`: langwatch_cookbooks): an adapter is trained, LoRA
_LORA_SWITCHES = ("lora", "use_lora")


def lora_switched_on(node: ast.Dict) -> bool:
    """`{"lora": True, ...}`: a dict literal that turns LoRA on."""
    return any(isinstance(key, ast.Constant) and key.value in _LORA_SWITCHES
               and isinstance(value, ast.Constant) and value.value is True
               for key, value in zip(node.keys, node.values))


def call_values(call: ast.Call, names: dict, machine: PrintedMachine) -> dict:
    name = called_name(call.func)
    owner = owner_name(call.func)
    out: dict = {}
    if ARGUMENT_CLASSES.match(name):
        out["training_args_class"] = ("trl." + name) if _TRL_CLASSES.search(name) else name
        for field in _TRAINING_FIELDS:
            value = _keyword(call, field, names, machine)
            if value is not None:
                out[field] = value
    elif name in _PEFT_CONFIGS or name in _PEFT_BUILDERS and _keyword(call, "r", names, _NO_MACHINE) is not None:
        out["adapter.peft_type"] = _PEFT_CONFIGS.get(name, "LORA")
        rank = _keyword(call, "r", names, _NO_MACHINE)
        if isinstance(rank, int):
            out["adapter.r"] = rank
        task = next((k.value for k in call.keywords if k.arg == "task_type"), None)
        if task is not None:
            task = task.attr if isinstance(task, ast.Attribute) else literal_value(task, names)
        if isinstance(task, str):  # `TaskType.CAUSAL_LM` or "CAUSAL_LM"
            out["adapter.task_type"] = task
    elif loads_a_model(call):
        model = _model_name(call, names)
        if model:
            out["model.name_or_path"] = model
        dtype = _half_dtype(call)
        if dtype:
            out["model.load_dtype"] = dtype
        if "For" in owner:  # the head it loads (AutoModelForSequenceClassification: a classifier's)
            out["model.architectures"] = [owner]
            labels = _keyword(call, "num_labels", names, _NO_MACHINE)
            if isinstance(labels, int) and not isinstance(labels, bool):  # 1: a score or regression head, no classes
                out["model.num_labels"] = labels
    if name == "BitsAndBytesConfig" or loads_a_model(call):
        if _keyword(call, "load_in_4bit", names, _NO_MACHINE) is True:
            out["quant.load_in_4bit"] = True
    elif name in _WEIGHT_QUANT_CONFIGS:  # `GPTQConfig(bits=4, ...)`: the base loaded from 4-bit GPTQ / AWQ weights
        bits = _keyword(call, "bits", names, _NO_MACHINE)
        if isinstance(bits, int) and not isinstance(bits, bool):
            out["quant.bits"], out["quant.quant_method"] = bits, _WEIGHT_QUANT_CONFIGS[name]
    return out


# transformers' configs of a base quantized ahead of training (its weights stored in `bits` bits)
_WEIGHT_QUANT_CONFIGS = {"GPTQConfig": "gptq", "AwqConfig": "awq"}


LOADED_MODEL_KEYS = ("model.name_or_path", "model.load_dtype", "model.architectures", "model.num_labels")


def trained_model(loads: list, trainers: list, aliases: dict[str, str], ran: set = frozenset()) -> dict:
    """What the loader of the model the notebook trains said: of the loaders called before the last trainer is built
    (the notebook's last run, whose log the notebook ends with: Alvarofp537_MG-LoRA-RAG's granite after its Qwen,
    0xafraidoftime's 1B after its 8B), the last one bound to the name handed to it as its model, through the names it
    was wrapped under (`lora_model = get_peft_model(model, ...)`), or the model's name handed as a string
    (`GRPOTrainer(model="Qwen/...")`); not a model tried first and replaced (`del model`), a critic or reward model
    loaded beside it, or a reload after training (in float16 to merge the adapter, or to try it). Else the last loader
    before the trainer, else the first one called. The last trainer is the last one whose `.train()` is called (where
    in `ran`), not a later one built only to evaluate."""
    if not loads:
        handed = next((h for _, h in sorted(trainers, key=lambda t: t[0]) if isinstance(h, str)), None)
        return {"model.name_or_path": handed} if handed else {}
    if not trainers:
        return _first_load(loads)
    # the last trainer handed a model (Unsloth's `PatchDPOTrainer()` builds none)
    handed_one = [t for t in trainers if t[1]] or trainers
    at, handed = max([t for t in handed_one if t[0] in ran] or handed_one, key=lambda t: t[0])
    if isinstance(handed, str):
        return {"model.name_or_path": handed}
    before = [(name, what) for where, name, what in loads if where <= at]
    bound = {name for name, _ in before}
    root = next((r for r in (_loaded_as(n, aliases) for n in handed or ()) if r in bound), None)
    named = [what for name, what in before if root is not None and name == root]
    return named[-1] if named else before[-1][1] if before else loads[0][2]


def _first_load(loads: list) -> dict:
    """What the first loader said, where no trainer says which model trains, where every loader names the same head;
    where they name two (a hand-written loop that loads a toxicity classifier to filter its data and then trains GPT-2;
    review 32a), which one trains is not known: only what every loader says alike is kept, not the classifier's head,
    name (its size read as the trained model's) or label count."""
    first = loads[0][2]
    heads = {tuple(what.get("model.architectures") or ()) for _, _, what in loads}
    if len(heads) == 1:
        return first
    return {k: v for k, v in first.items() if all(what.get(k) == v for _, _, what in loads)}


def _loaded_as(name: str, aliases: dict[str, str]) -> str:
    """The name a model was loaded under, through the names it was wrapped under since (`lora_model` -> `model`)."""
    seen = {name}
    while name in aliases and aliases[name] not in seen:
        name = aliases[name]
        seen.add(name)
    return name


def bound_names(tree: ast.AST) -> dict[int, str]:
    """The name each call's result is bound to (`model, tokenizer = X.from_pretrained(...)`: `model`), by call."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.targets:
            target = node.targets[0]
            first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(first, ast.Name):
                out[id(node.value)] = first.id
    return out


def wrapped_names(tree: ast.AST, bound: dict[int, str]) -> dict[str, str]:
    """`lora_model = get_peft_model(model, config)`: the new name of a model a call wrapped (its first argument, or its
    `model=`), by that name."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) in bound:
            arg = next((k.value for k in node.keywords if k.arg == "model"), node.args[0] if node.args else None)
            if isinstance(arg, ast.Name) and arg.id != bound[id(node)]:
                out[bound[id(node)]] = arg.id
    return out


def model_handed(call: ast.Call, names: dict) -> str | tuple[str, ...] | None:
    """What a trainer is handed as its model: the model's name where it is a string (`model="Qwen/..."`, or first:
    `SFTTrainer("openai-community/gpt2-medium", args=...)`), else the names it could be (its `model=`, or its
    positional arguments: TRL 0.x's `PPOTrainer(config, model, ...)`)."""
    keyword = next((k.value for k in call.keywords if k.arg == "model"), None)
    if keyword is not None:
        literal = literal_value(keyword, names) if not isinstance(keyword, ast.Name) or keyword.id in names else None
        if isinstance(literal, str) and literal:
            return literal
        return (keyword.id,) if isinstance(keyword, ast.Name) else None
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str) \
            and call.args[0].value:
        return call.args[0].value
    positional = tuple(a.id for a in call.args if isinstance(a, ast.Name))
    return positional or None


def builds_a_trainer(call: ast.Call) -> bool:
    """`Trainer(...)`, `SFTTrainer(...)`, `Seq2SeqTrainer(...)`, `UnslothTrainer(...)`: a trainer class built."""
    return _is_trainer_class(called_name(call.func))


def model_classes_followed(trees: list) -> list:
    """The trees with each loader called through a name that holds a model class (`model_cls = AutoModelForCausalLM`,
    then `model_cls.from_pretrained(...)`: SolipsisAI_research) called through the class's own name, where that name
    is bound once in the notebook and to that class alone."""
    bound: dict[str, list] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(node.value)
    held = {name: called_name(values[0]) for name, values in bound.items() if len(values) == 1
            and isinstance(values[0], (ast.Name, ast.Attribute)) and MODEL_CLASSES.search(called_name(values[0]))}
    if not held:
        return trees
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in _LOADERS and isinstance(node.value, ast.Name) \
                    and node.value.id in held:
                node.value = ast.copy_location(ast.Name(id=held[node.value.id], ctx=ast.Load()), node.value)
    return trees


def trainer_subclasses_followed(trees: list) -> list:
    """The trees with each call of a Trainer subclass the notebook defines under a name of its own
    (`class customtrainer(Trainer)`, yangoos57_Bert_For_Domain_Adaptation) made a call of the Trainer it subclasses,
    where the name is defined once: the readers below know a trainer by its class's name (`builds_a_trainer`)."""
    defined: dict[str, list[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [called_name(b) for b in node.bases]
                defined.setdefault(node.name, []).append(next((b for b in bases if _is_trainer_class(b)), ""))
    held = {name: bases[0] for name, bases in defined.items()
            if len(set(bases)) == 1 and bases[0] and not _is_trainer_class(name)}
    if not held:
        return trees
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in held:
                node.func = ast.copy_location(ast.Name(id=held[node.func.id], ctx=ast.Load()), node.func)
    return trees


def _is_trainer_class(name: str) -> bool:
    return name[:1].isupper() and name.endswith("Trainer")


def loads_a_model(call: ast.Call) -> bool:
    """`AutoModelForCausalLM.from_pretrained(...)`, `FastLanguageModel.from_pretrained(...)`: a model class's loader
    (a tokenizer's is not)."""
    return called_name(call.func) in _LOADERS and bool(MODEL_CLASSES.search(owner_name(call.func)))


def _half_dtype(call: ast.Call) -> str | None:
    """"bfloat16" or "float16" where a loader is asked for its weights in half precision (`torch_dtype=torch.bfloat16`,
    `dtype="float16"`), else None."""
    value = next((k.value for k in call.keywords if k.arg in ("torch_dtype", "dtype")), None)
    name = value.attr if isinstance(value, ast.Attribute) else value.value if isinstance(value, ast.Constant) else None
    return ({"bfloat16": "bfloat16", "float16": "float16", "half": "float16"}.get(name)
            if isinstance(name, str) else None)


def _model_name(call: ast.Call, names: dict) -> str | None:
    for node in call.args[:1] + [k.value for k in call.keywords
                                 if k.arg in ("model_name", "pretrained_model_name_or_path")]:
        value = literal_value(node, names)
        if isinstance(value, str) and value:
            return value
    return None


def _keyword(call: ast.Call, field: str, names: dict, machine: PrintedMachine):
    node = next((k.value for k in call.keywords if k.arg == field), None)
    return None if node is None else machine_value(node, machine, names)


def machine_value(node: ast.expr, machine: PrintedMachine, names: dict):
    """The value an expression gave, where it is a literal, a name bound to one, a test of the machine the outputs
    answer, or a choice made on such a test (`"cuda" if torch.cuda.is_available() else "cpu"`, `True if device ==
    "cuda" else False`); else None."""
    if isinstance(node, ast.IfExp):
        test = machine_test(node.test, machine, names)
        return None if test is None else machine_value(node.body if test else node.orelse, machine, names)
    tested = machine_test(node, machine, names)
    return tested if tested is not None else literal_value(node, names)


def machine_test(node: ast.expr, machine: PrintedMachine, names: dict | None = None,
                 switches_only: bool = False) -> bool | None:
    """What a test of the machine gave, as the outputs answer it (`torch.cuda.is_available()`,
    `torch.cuda.is_bf16_supported()`, Unsloth's `is_bfloat16_supported()`, negated or joined with and / or: the
    precision flags notebooks pass, or a comparison of what such a test chose: `device == "cuda"` after `device =
    "cuda" if torch.cuda.is_available() else "cpu"`); None where the expression is no such test or the outputs do not
    answer it. A bare name decides only where `names` are `switches_only` (`switches.literal_switches`: bound to one
    literal by every binding that ran before); the last binding in file order may be of a cell run earlier."""
    names = {} if names is None else names
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = machine_test(node.operand, machine, names, switches_only)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        parts = [machine_test(value, machine, names, switches_only) for value in node.values]
        decisive = isinstance(node.op, ast.Or)  # True decides an `or`, False an `and`
        return decisive if decisive in parts else None if None in parts else not decisive
    if isinstance(node, ast.Compare):
        return _compared(node, machine, names)
    if isinstance(node, (ast.Name, ast.Attribute)):  # a switch: a name the code binds to True / False
        value = names.get(dotted(node)) if switches_only else None
        return value if isinstance(value, bool) else None
    if not isinstance(node, ast.Call):
        return None
    if called_name(node.func) == "is_available" and owner_name(node.func) == "cuda":
        return machine.cuda
    return machine.bf16 if called_name(node.func) in _BF16_SUPPORT else None


def _compared(node: ast.Compare, machine: PrintedMachine, names: dict) -> bool | None:
    """`device == "cuda"` / `!=` between two values the code and the outputs give (Onemaeus97_yifanbot's
    `bf16=(device=="cuda")`, AjayChikate's `fp16=True if device == "cuda" else False`), a switch compared with a
    literal (`bits == 4`, `quantize is True`); None where either is not known."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        return None
    left, right = (machine_value(side, machine, names) for side in (node.left, node.comparators[0]))
    if isinstance(node.ops[0], (ast.Is, ast.IsNot)):  # (True / False are singletons: `is` is their equality)
        known = isinstance(left, bool) and isinstance(right, bool)
        return (left is right) is isinstance(node.ops[0], ast.Is) if known else None
    if left is None or right is None:
        return None
    return (left == right) is isinstance(node.ops[0], ast.Eq)


def class_fields(tree: ast.Module) -> dict:
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

