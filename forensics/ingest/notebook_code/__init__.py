"""What a notebook's own code says of the run it trained, for the run profile: the arguments it passed.

Outputs say what ran; for the method, the precision and the model, a notebook's outputs are often silent (a Colab
run prints the Trainer's table and little else), while its code names them: `LoraConfig(r=16, ...)`,
`BitsAndBytesConfig(load_in_4bit=True)`, `FastLanguageModel.from_pretrained("unsloth/...-bnb-4bit", load_in_4bit=True)`,
`TrainingArguments(bf16=True, ...)`, TRL's `SFTConfig(...)` / `GRPOConfig(...)`. Only cells that ran (an execution count
or an output; where the counts were cleared, the cells up to the last output) are read, parsed with `ast` (never run);
shell and magic lines are blanked first, and a cell indented as a whole dedented (IPython runs it so), a cell that is
not Python is passed over. A keyword is taken where its value is a literal, or where it tests the machine
(`torch.cuda.is_available()`, `torch.cuda.is_bf16_supported()`, Unsloth's `is_bfloat16_supported()`, negated or not:
`fp16 = not is_bfloat16_supported()`) and the outputs answer the test (`machine`: a CUDA device printed, a GPU named,
the `Bfloat16 = TRUE / FALSE` line of Unsloth's banner). Where a later cell passes a keyword again (an SFT, then a DPO),
the later value stands: the notebook's last run is the one its last table shows. A 4-bit quantization handed to
another model's loader than the one the last trainer trains (`quantized_load`) is not the trained model's.

TEXT_KEY names the values in a LogRecords' texts (JSON), where ingest.run_config reads them.
`code_values(cells, outputs)` gives a flat dict in the run configuration's names (`bf16`, `fp16`, `learning_rate`,
`training_args_class`, `trainer_class` (a TRL trainer the code builds: `trl.SFTTrainer`), `quant.load_in_4bit`,
`quant.bits` / `quant.quant_method` (`GPTQConfig(bits=4)`, `AwqConfig(bits=4)`),
`adapter.peft_type`, `adapter.r`, `model.name_or_path`, `model.load_dtype` (a half-precision load),
`precision.default_fp32` where the notebook trains in its own code with nothing below float32 asked for (or through
gpt-2-simple's `finetune`, which also trains every weight: `method` full), `precision.trainer_fp32` (the arguments
class) where it builds a Trainer whose arguments leave fp16 and bf16 off and nothing else asks for mixed precision,
`precision.unsloth_mixed` ("fp16" / "bf16": the mixed precision Unsloth's trainer turns on where the code sets neither
flag), `precision.autocast` ("fp16" / "bf16": a hand-written loop's autocast), `precision.keras_policy`
("fp16" / "bf16": Keras' mixed_float16 / mixed_bfloat16 global policy),
`model.built_here` where it builds its model from random weights), `model.tokenizer_trained` (the call that trains
its own tokenizer, where it loads no trained weights: `tokenizer_trained`), `loss.pairwise_function` (the name of a
pairwise preference loss its loop computes: `pairwise`), `data.prompt_response_lm` (the string that writes a prompt
and its response into one example of a causal LM trained on its own input tokens: `prompt_pairs`),
`data.char_vocabulary` and the text's size in characters
(a character-level text: `char_corpus`), the text's characters and subword tokens as its code prints them
(`subword_corpus`), `loss.epoch_sum_unscaled` (a loop prints an epoch's summed
batch losses and the batch count is not told: `summed_loss`), `data.labels_include_padding` (where the code copies
padded input_ids into a plain Trainer's labels with nothing masking the pad ids, and the cells and lines that do:
`pad_labels`), `_framework` lightning and
`precision.lightning` (a Lightning Trainer the code builds, and the precision it is given), empty
where the code says none of them.

Read in the modules of this package: cells (which cells ran, parsed), switches (the branches a literal switch or
`if False:` turns off, left out of the trees), arguments (the keywords of the calls),
precision (autocast, float32, Unsloth's mixed precision, Keras' policy), model (built here, trained whole),
gpt2_simple (gpt-2-simple's `finetune`), lightning (a PyTorch Lightning Trainer), pad_labels and label_flow (labels
that count padding, and where the labels come from),
loads_aside (calls named for loading that load no weights of the trained model), pairwise (a
hand-written pairwise preference loss), summed_loss (a loop's epoch loss printed as a sum), machine (what the
outputs say of CUDA and bfloat16), syntax (what they ask of the syntax tree).
"""
from __future__ import annotations

import ast

from .syntax import called_name, dotted
from .cells import cells_meant, parsed_cells, _source
from .char_corpus import char_corpus
from .subword_corpus import subword_corpus
from .arguments import (LOADED_MODEL_KEYS, bound_names, builds_a_trainer, call_values, class_fields,
                        loads_a_model, lora_switched_on, model_handed, trained_model, trl_trainer, wrapped_names,
                        machine_test, machine_value)
from .data import masked_lm, raw_text_lm, simplified_text
from .prompt_pairs import prompt_response_lm
from .gpt2_simple import gpt2_simple_finetunes_whole
from .lightning import lightning_values
from .machine import printed_machine
from .precision import (BF16_CHANGED_TO_FP16, autocast_precision, int8_inputs_in_float32, keras_policy_precision,
                        trainer_arguments_in_fp32, trains_in_default_float32, unsloth_mixed_precision,
                        without_inference_autocast)
from .model import loads_weights, model_built_here, trains_whole_model
from .pad_labels import labels_with_padding
from .adapter_wraps import (ADAPTER_LOAD, LOAD_AT, adapter_on_another_model, loads_an_adapter,
                            wraps_an_adapter)
from .pairwise import pairwise_loss_function
from .quantized_load import FOUR_BIT_LOAD, four_bit_config_names, loaded_in_four_bits
from .summed_loss import sum_of_unknown_count
from .tokenizer_trained import tokenizer_trained
from .trainer_runs import calls_train, train_target, trained_trainers

TEXT_KEY = "notebook_code"
# peft's `prepare_model_for_kbit_training(model)` casts every float16 / bfloat16 weight that is not quantized to float32
# (the adapter made after it is float32 too), so a model loaded with `torch_dtype=torch.bfloat16` then trains in fp32
# where no fp16 / bf16 flag is set (lmaddalena_mistral-tutorial's Mistral QLoRA, judged fp32 as the recipe's others)
_KBIT_PREPARED = "prepare_model_for_kbit_training"


_SENTENCE_MODEL = "SentenceTransformer"


def code_values(cells: list, outputs: str) -> dict:
    """The run-configuration values the notebook's executed code cells pass (module docstring)."""
    machine = printed_machine(outputs)
    names: dict[str, object] = {}  # `load_in_4bit = True`, `model_name = "..."`: a name later passed as a keyword
    values: dict = {}
    called: set[str] = set()
    trl_names: set[str] = set()  # what the cells imported from trl (`from trl import SFTTrainer`)
    loads: list[tuple[tuple[int, int], str | None, dict]] = []  # (where, the name it is bound to, what) of each loader
    trainers: list[tuple[tuple[int, int], object]] = []  # (where, the model handed to it) of each trainer built
    trainer_names: list[tuple[tuple[int, int], str | None]] = []  # (where, the name it is bound to) of each trainer
    train_calls: list[tuple[tuple[int, int], object]] = []  # (where, the name or the build it is called on): .train()
    aliases: dict[str, str] = {}  # `lora_model` -> `model`: the names a loaded model was wrapped under
    wraps: list[tuple[int, int]] = []  # where each call that puts an adapter on a model is
    trees = list(parsed_cells(cells))  # the cells that ran, parsed once for every question below
    four_bit_configs = four_bit_config_names(trees, names)
    code = "\n".join(_source(c) for c in cells if isinstance(c, dict) and c.get("cell_type") == "code")
    for cell, tree in enumerate(trees):
        bound = bound_names(tree)
        aliases.update(wrapped_names(tree, bound))
        names.update(class_fields(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                _bind(names, node, machine)
            elif isinstance(node, ast.Dict) and lora_switched_on(node):
                values.setdefault("adapter.peft_type", "LORA")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "trl":
                trl_names.update(alias.asname or alias.name for alias in node.names)
            elif isinstance(node, ast.Call):
                called.add(called_name(node.func))
                found = call_values(node, names, machine)
                where = (cell, getattr(node, "lineno", 0))
                if loads_a_model(node):
                    loads.append((where, bound.get(id(node)),
                                  {**{k: found.pop(k) for k in LOADED_MODEL_KEYS if k in found},
                                   FOUR_BIT_LOAD: loaded_in_four_bits(node, four_bit_configs, names),
                                   LOAD_AT: where, ADAPTER_LOAD: loads_an_adapter(node)}))
                if wraps_an_adapter(node):
                    wraps.append(where)
                if builds_a_trainer(node):
                    trainers.append((where, model_handed(node, names)))
                    trainer_names.append((where, bound.get(id(node))))
                if calls_train(node):
                    train_calls.append((where, train_target(node, cell)))
                values.update(found)
                trainer = trl_trainer(node, trl_names)
                if trainer:
                    values["trainer_class"] = trainer
    trained = dict(trained_model(loads, trainers, aliases, trained_trainers(trainer_names, train_calls)))
    # (where a trainer tells which model trains: with none, the first load stands for it and says too little)
    if trainers and trained.get(FOUR_BIT_LOAD) is False and any(what[FOUR_BIT_LOAD] for _, _, what in loads):
        values.pop("quant.load_in_4bit", None)  # the 4-bit config went to another model's loader, not the trained one
    if trainers and adapter_on_another_model(trained, wraps):
        for key in [k for k in values if k.startswith("adapter.")]:
            values.pop(key)
    values.update({k: v for k, v in trained.items() if k not in (FOUR_BIT_LOAD, LOAD_AT, ADAPTER_LOAD)})
    values.update(lightning_values(trees, names))
    # (it casts the half weights it finds to float32: the load's dtype no longer trains; where a TRL trainer ran it out
    # of the code's sight, the int8 layers' warning says so)
    if _KBIT_PREPARED in called or int8_inputs_in_float32(outputs):
        values.pop("model.load_dtype", None)
    if values.get("model.load_dtype") == "bfloat16" and BF16_CHANGED_TO_FP16.search(outputs):
        values["model.load_dtype"] = "float16"  # what the run printed beats what the code asked for
    meant = "\n".join(_source(c) for c in cells_meant(cells))
    # a trainer handed a model's name loads it itself (`SFTTrainer("openai-community/gpt2-medium", ...)`); so does
    # sentence-transformers' constructor, `SentenceTransformer("all-MiniLM-L6-v2")`, with no from_pretrained
    loaded = bool(loads) or any(isinstance(handed, str) for _, handed in trainers) or _SENTENCE_MODEL in called
    gpt2_simple = gpt2_simple_finetunes_whole(trees)
    if trains_whole_model(values, called, trees, meant, loaded=loaded) or gpt2_simple:
        values["method"] = "full"
    training_code = "\n".join(without_inference_autocast(c) for c in cells
                              if isinstance(c, dict) and c.get("cell_type") == "code")
    if "bf16" not in values and "fp16" not in values and (
            gpt2_simple or trains_in_default_float32(trees, training_code)):
        values["precision.default_fp32"] = True
    elif trainer_arguments_in_fp32(values, trees, training_code):
        values["precision.trainer_fp32"] = values["training_args_class"]
    half_flag = "bf16" in values or "fp16" in values
    found = {"precision.unsloth_mixed": unsloth_mixed_precision(values, trees, outputs, machine.bf16),
             "precision.autocast": None if half_flag else autocast_precision(trees, names),
             "data.raw_text_lm": raw_text_lm(trees),
             "data.masked_lm": masked_lm(trees),
             "data.prompt_response_lm": prompt_response_lm(trees),
             "data.simplified_text": simplified_text(trees),
             "loss.pairwise_function": pairwise_loss_function(trees),
             "loss.epoch_sum_unscaled": sum_of_unknown_count(cells),
             "precision.keras_policy": keras_policy_precision(trees),
             "data.labels_include_padding": labels_with_padding(cells)}
    values.update({key: value for key, value in found.items() if value})
    values.update(char_corpus(trees, outputs))
    values.update(subword_corpus(cells))
    no_base = "model.name_or_path" not in values and not any(k.startswith(("adapter.", "quant.")) for k in values)
    built = model_built_here(cells, trees, code)
    if built and no_base:
        values["model.built_here"] = built
    tokenizer = tokenizer_trained(trees)
    if tokenizer and no_base and not loads_weights(cells):
        values["model.tokenizer_trained"] = tokenizer
    return values


def _bind(names: dict, node: ast.Assign, machine) -> None:
    """Keep what an assignment binds where a later keyword may pass it: a literal, a test of the machine the outputs
    answer (`use_fp16 = torch.cuda.is_available()`) or what such a test chose (`device = "cuda" if
    torch.cuda.is_available() else "cpu"`)."""
    constant = node.value.value if isinstance(node.value, ast.Constant) else None
    value = constant if isinstance(constant, (bool, int, float, str)) else \
        machine_value(node.value, machine, names) if isinstance(node.value, ast.IfExp) \
        else machine_test(node.value, machine, names)
    if value is None:
        return
    for target in node.targets:
        if isinstance(target, (ast.Name, ast.Attribute)) and dotted(target):
            names[dotted(target)] = value
