"""What a notebook's code says of the model it trains: built here from random weights (no trained weights loaded
anywhere), or trained whole (an optimizer over every parameter of a model nothing freezes)."""
from __future__ import annotations

import ast
import re

from .syntax import called_name, owner_name, root_name
from .cells import SHELL_OR_MAGIC, SHELL_TRAINING, cells_meant, parsed_cells, without_comments
from .arguments import MODEL_CLASSES, loads_a_model
from .loads_aside import loads_set_aside, saves_alone

# Calls that load trained weights: anything named for loading (a state dict, `torch.load` under any alias, a saved
# model, the notebook's own `load_weights_into_gpt` / `download_and_load_gpt2`, `clip.load`, safetensors'
# `load_file`) but the data loaders; a pretrained model, a preset, a hub layer, a sentence encoder, a pipeline
_DATA_LOADERS = re.compile(r"(?i)dataset|dataloader|load_data|load_from_disk|load_metric|dotenv|^load_iris|json|yaml|"
                           r"csv|load_text|load_image")
_PRETRAINED_CALLS = ("from_pretrained", "from_preset", "KerasLayer", "SentenceTransformer", "pipeline", "restore")
_MODULE_BASES = ("Module", "Model")  # torch's nn.Module, Keras' Model: a network the notebook defines itself


def loads_weights(cells: list) -> bool:
    """Whether a code cell meant for the run (`cells_meant`: any, run or not, where the counts were cleared) calls
    what loads trained weights (`_loads_trained_weights`); a comment quoting one, a method of that name the notebook
    defines, a tokenizer's load, a model loaded only to generate, a text reader of the notebook's own or a reload of a
    file it saved (`loads_set_aside`) is no load. A cell left
    uncounted among counted ones never ran: evintunador_micro-GPT-sandbox's reload of a saved GPT, below its training
    cell; only its save statements are kept, for the files they name (`saves_alone`)."""
    ran = {id(c) for c in cells_meant(cells)}
    kept = [dict(c, execution_count=1) if id(c) in ran else saves_alone(c) for c in cells
            if isinstance(c, dict) and c.get("cell_type") == "code"]
    trees = list(parsed_cells([c for c in kept if c is not None]))
    aside = loads_set_aside(trees, _loads_trained_weights)
    return any(isinstance(node, ast.Call) and _loads_trained_weights(node) and id(node) not in aside
               for tree in trees for node in ast.walk(tree))


def _loads_trained_weights(call: ast.Call) -> bool:
    """A call that loads trained weights (see `_DATA_LOADERS`), or asks a model class for its pretrained ones
    (`pretrained=True`, `weights='imagenet'`, torchvision's `weights=ResNet50_Weights...`)."""
    name = called_name(call.func)
    owner = owner_name(call.func)
    # ('load' inside 'download' is none: `nltk.download('punkt')` fetches a tokenizer's data,
    # stopstressingmeout_Next-Word-Prediction-Using-LSTM; nor inside 'upload': Colab's `files.upload()` of the text
    # to train on, Hareeshma01_generative-ai-lstm-textgen)
    # ... nor a module's reload: `import utils; reload(utils)` (Python 2's builtin, importlib.reload) re-reads code,
    # no weights (CienegaOrchards_Learning's fast.ai notebook)
    named_a_load = "load" in name.lower().replace("download", "").replace("upload", "") and name != "reload"
    if name in _PRETRAINED_CALLS or named_a_load and not _DATA_LOADERS.search(f"{owner}.{name}"):
        return True
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "pretrained" and not (isinstance(value, ast.Constant) and not value.value):
            return True
        if keyword.arg == "weights" and not (isinstance(value, ast.Constant) and value.value is None):
            return True
    return False


def model_built_here(cells: list, trees: list, code: str) -> str | None:
    """The class a notebook builds its model from where it trains it from random weights: a network it defines
    (`class GPTLanguageModel(nn.Module)`) or Keras' `Sequential([...])`, called in a cell that ran, or a library
    model class given a config (`GPT2LMHeadModel(config)`), and nothing in its code loading trained weights nor
    a program training it (`!python train.py`). None otherwise."""
    if SHELL_TRAINING.search(code) or loads_weights(cells):
        return None
    from_torch_nn = {alias.asname or alias.name for tree in trees for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module == "torch.nn" for alias in node.names}
    defined = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
               and any(_a_network_base(base, from_torch_nn) for base in node.bases)}
    own = {name for tree in trees for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
           for name in _own_imports(node)}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _builds_a_model(called_name(node.func), node, defined, own):
                return called_name(node.func)
    return None


def _a_network_base(base: ast.expr, from_torch_nn: set[str]) -> bool:
    """A base class of a network: torch's `nn.Module` (`torch.nn.Module`, or `Module` imported from torch.nn), a
    Lightning module, Keras' `Model`. Another library's `Module` is no network: DSPy's `dspy.Module` is a prompt
    program whose model is served elsewhere (langwatch_cookbooks' `class QueryRewriter(dspy.Module)`)."""
    name = called_name(base)
    if name == "Module":
        return owner_name(base) == "nn" if isinstance(base, ast.Attribute) else name in from_torch_nn
    return name.endswith(_MODULE_BASES)


def _builds_a_model(name: str, call: ast.Call, defined: set[str], own: set[str]) -> bool:
    """A call that builds a network with random weights: a class the notebook defines, Keras' `Sequential` /
    `Model(inputs, outputs)`, or a library's model class handed a config (`GPT2LMHeadModel(config)`)."""
    if name in defined or name in ("Sequential", "Model"):
        return True
    # (a model class of the notebook's own module may load a backbone where the notebook does not show it)
    return bool(MODEL_CLASSES.search(name)) and name not in own and bool(call.args or call.keywords) \
        and ("For" in name or name.endswith("LMHeadModel"))


# What any PEFT or quantized set-up leaves in a notebook's code, run or not
# (`ia3` not followed by a digit: a course folder `ia368v_dd` in a path is no IA3 adapter, eduseiti's notebook)
_ADAPTER_WORDS = re.compile(r"(?i)peft|lora|adapter|load_in_[48]bit|bitsandbytes|prompt_?tuning|prefix_?tuning|"
                            r"ia3(?![0-9])")


def trains_whole_model(values: dict, called: set[str], trees: list, code: str, loaded: bool) -> bool:
    """The code that ran builds a Trainer around a pre-trained model it loaded (`from_pretrained`, its name a literal
    or not: `config.base_model_name`), or a hand-written loop's optimizer over every parameter of a model the notebook
    loads or builds (`_optimizer_over_a_whole_model`, a TensorFlow loop's `_gradients_applied_to_a_whole_model`) or
    hands by name, and nothing in the notebook's code (`code`: the cells that ran where the cells carry counts, else
    every cell, run or not) sets up an adapter or a quantized base: every weight is trained. A notebook that trains
    through a shell command (`!python train.py --lora ...`) shows no Trainer here."""
    if any(key.startswith(("adapter.", "quant.")) for key in values):
        return False
    python = "\n".join(line for line in code.splitlines() if not SHELL_OR_MAGIC.match(line))  # (`!pip install
    # bitsandbytes peft` installs a library, it sets up nothing)
    # (a comment sets up nothing: weiyuli20_llm_alignment's `# peft_config=None, # optional: PEFT here, e.g. LoRA`, the
    # gemma cookbook's `output_dir=output_dir,  # Directory to save adapters` over a model handed whole to SFTTrainer)
    if _ADAPTER_WORDS.search(without_comments(python)) or _model_handed_to_own_code(trees):
        return False
    if loaded and any(name.endswith("Trainer") for name in called) and not _sets_weights_aside(trees, python):
        return True
    return (_optimizer_over_a_whole_model(trees) or _gradients_applied_to_a_whole_model(trees, python)) \
        and not _FREEZE_CALLS.search(python)


# Keras sets a layer's (or model's) weights aside from training by `layer.trainable = False`
_KERAS_FREEZE = re.compile(r"\.trainable\s*=\s*False")
_KERAS_WEIGHTS = ("trainable_variables", "trainable_weights")


def _gradients_applied_to_a_whole_model(trees: list, python: str) -> bool:
    """A TensorFlow loop's `optimizer.apply_gradients(zip(grads, model.trainable_variables))` over a model the notebook
    loads or builds (`_models_made`: a Keras `Model(inputs, outputs)`): the gradient tape's update of every weight
    Keras trains (AaronBarbosa12_transformer_model's GradientTape loop, the Keras counterpart of an optimizer over
    `model.parameters()`), and no `trainable = False` in the code."""
    if _KERAS_FREEZE.search(python):
        return False
    models = _models_made(trees)
    return any(isinstance(node, ast.Call) and called_name(node.func) == "apply_gradients"
               and any(isinstance(n, ast.Attribute) and n.attr in _KERAS_WEIGHTS and isinstance(n.value, ast.Name)
                       and n.value.id in models for n in ast.walk(node))
               for tree in trees for node in ast.walk(tree))


# A torch (or bitsandbytes, or a paper's) optimizer class: what a hand-written loop builds over the weights it trains
_OPTIMIZERS = re.compile(
    r"(?i)^(?:paged)?(?:adam\w*|sgd|adafactor|lion\w*|rmsprop|adagrad|adadelta|lamb|sophia\w*|muon)$")
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
    models = _models_made(trees) | _own_class_models_from_random_weights(trees)
    trained = {name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)
               and _OPTIMIZERS.match(called_name(node.func)) for name in [_all_parameters_of(node)] if name}
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
                                                          and called_name(item.context_expr.func) in _NO_GRAD
                                                          for item in node.items):
                        return True
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr == "detach"):
                        return True
    return False


def _all_parameters_of(call: ast.Call) -> str | None:
    """`model` of `AdamW(model.parameters(), ...)` or `AdamW(params=model.parameters())`."""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
    if isinstance(given, ast.Call) and isinstance(given.func, ast.Attribute) and given.func.attr == "parameters" \
            and isinstance(given.func.value, ast.Name) and not given.args:
        return given.func.value.id
    return None


def _own_class_models_from_random_weights(trees: list) -> set[str]:
    """The names bound to a model built from a class the code imports by name from a module of its own
    (`from models.transformer import Transformer`, `from .model import CSLLM`) and gives no model name (sizes, a
    device, a data or tokenizer file: `Transformer(src_vocab, tgt_vocab, max_len)`), where nothing in the code loads
    trained weights but a reload of a file it saved (`loads_set_aside`: AananthV_Pytorch-Transformer resumes from its
    own saved/best.h5): a network built from sizes starts from random weights, and nothing freezes part of those or
    puts an adapter on them. Empty where the code loads any (the class may wrap that model, frozen). Not seen: a class
    whose module (not in the copy) loads a named backbone itself and freezes it; a model name would then be the
    class's own default, which no run in the corpus shows."""
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    aside = loads_set_aside(trees, _loads_trained_weights)
    own_states = _own_states(trees, aside)
    if any(_loads_trained_weights(call) and id(call) not in aside and not _puts_back(call, own_states)
           for call in calls):
        return set()
    classes = {name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for name in _own_imports(node) if name[:1].isupper() and name != "*"}
    made = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                call = _unmoved(node.value)
                if called_name(call.func) in classes and not any(
                        isinstance(n, ast.Constant) and isinstance(n.value, str) and not _NO_MODEL_NAME.search(n.value)
                        for a in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(a)):
                    made |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return made


def _own_states(trees: list, aside: set[int]) -> set[str]:
    """The names bound to weights of the run's own: a reload of a file it saved (a load `loads_set_aside` sets
    aside: `checkpoint = torch.load('saved/best.h5')`) or a copy of a model's state (`best_state = {k: v.cpu() for
    k, v in model.state_dict().items()}`)."""
    return {target.id for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and any(isinstance(n, ast.Call) and (id(n) in aside or isinstance(n.func, ast.Attribute)
                                                 and n.func.attr == "state_dict") for n in ast.walk(node.value))
            for target in node.targets if isinstance(target, ast.Name)}


def _puts_back(call: ast.Call, own_states: set[str]) -> bool:
    """`load_state_dict(X)` (`X['model_state_dict']` too) of weights the run saved or kept itself (`_own_states`)."""
    if called_name(call.func) != "load_state_dict" or len(call.args) != 1:
        return False
    given = call.args[0]
    while isinstance(given, ast.Subscript):
        given = given.value
    return isinstance(given, ast.Name) and given.id in own_states


# A string a model's constructor is given that names no trained model: a device, a data or tokenizer file
_NO_MODEL_NAME = re.compile(r"(?i)^(?:cpu|cuda(?::\d+)?|mps)$|\.(?:json|txt|vocab|csv|tsv)$")


def _unmoved(call: ast.Call) -> ast.Call:
    """The call that builds a model under its moves: `GPT(config)` of `GPT(config).to(device).train()`."""
    while isinstance(call.func, ast.Attribute) and call.func.attr in _MOVES and isinstance(call.func.value, ast.Call):
        call = call.func.value
    return call


def _models_made(trees: list) -> set[str]:
    """The names the notebook binds to a model it loads, builds from a model class (its own `class GPT(nn.Module)`
    or a library's `GPT2LMHeadModel(config)`) or copies (`copy.deepcopy(model)`), `.to(device)` and the like
    aside."""
    classes = {node.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    made = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                call = _unmoved(node.value)
                name = called_name(call.func)
                if loads_a_model(call) or name in classes or name == "deepcopy" or MODEL_CLASSES.search(name):
                    made |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return made


def _frozen_models(trees: list, models: set[str]) -> set[str | None]:
    """The models some of whose weights the code sets aside from training (`for p in X.parameters(): p.requires_grad
    = False`, `X.requires_grad_(False)`, `X.lm_head.weight.requires_grad = False`); None for a freeze the code does
    not tie to one of `models`."""
    frozen: set[str | None] = set()
    dead = _never_run(trees)  # freezes under a test that never holds set nothing aside
    looped: set[int] = set(dead)  # the freezes inside a loop over a model's parameters, told by that loop
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr in _PARAMETERS:
                inner = [n for n in ast.walk(node) if _sets_aside(n) and id(n) not in dead]
                if inner:
                    root = root_name(node.iter.func.value)
                    frozen.add(root if root in models else None)
                    looped |= {id(n) for n in inner}
    for tree in trees:
        for node in ast.walk(tree):
            if _sets_aside(node) and id(node) not in looped:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.func
                root = root_name(target)
                frozen.add(root if root in models else None)
    return frozen


def _sets_weights_aside(trees: list, python: str) -> bool:
    """Whether the code sets weights aside from training: a freeze helper (`_FREEZE_CALLS`), or a `requires_grad =
    False` (`_FREEZES`) that is not only under a test that can never hold (`_never_run`). Where the text shows a
    freeze the cells' syntax does not, it counts."""
    if _FREEZE_CALLS.search(python) or not _FREEZES.search(python):
        return bool(_FREEZE_CALLS.search(python))
    dead = _never_run(trees)
    freezes = [n for tree in trees for n in ast.walk(tree) if _sets_aside(n)]
    return not freezes or any(id(n) not in dead for n in freezes)


def _never_run(trees: list) -> set[int]:
    """The ids of the nodes under an `if` whose test can never hold (`_never_true`)."""
    return {id(n) for tree in trees for node in ast.walk(tree) if isinstance(node, ast.If) and _never_true(node.test)
            for stmt in node.body for n in ast.walk(stmt)}


_SPLITS = ("split", "rsplit", "splitlines")


def _never_true(test: ast.expr) -> bool:
    """`name.split('.') == 'encoder'`: the list `str.split` returns compared with a string literal is never equal, so
    its branch never runs (mitchgauthier_nlp_6120_abs_summarization's 'freeze the encoder' cell, which trains every
    weight)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return (any(isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr in _SPLITS
                for x in sides)
            and any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in sides))


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
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and loads_a_model(node.value):
                models |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.Call):
                calls.append(node)
    return any(root_name(call.func) in own and any(isinstance(a, ast.Name) and a.id in models
                                                    for a in [*call.args, *(k.value for k in call.keywords)])
               for call in calls)


def _own_imports(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The names an import binds from a module that is no known library (a relative import is always the notebook's
    own code)."""
    if isinstance(node, ast.ImportFrom):
        known = node.level == 0 and (node.module or "").split(".")[0] in _KNOWN_PACKAGES
        return set() if known else {alias.asname or alias.name for alias in node.names}
    return {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] not in _KNOWN_PACKAGES}
