"""What a notebook's code says of the data a causal language model is trained on: plain text whose labels are its
own tokens, with no prompt or response written around it (next-token training on raw text, which the corpus calls
pretrain whatever the notebook's name says: StaticOwl_dpnlp's `fine_tune.ipynb` chunks a text file, AliN75's
`fine-tuning.ipynb` is run_clm's group_texts, Abdelmanemm's tokenizes a column of jokes for
DataCollatorForLanguageModeling(mlm=False)).

A notebook that writes its examples from fields (an f-string or `.format` joining two or more of them, a template
string, a chat template, a formatting function), reads a text file through TextDataset (lines the code does not show:
SRM47's paraphrase pairs, ishanmehta2's `clue, length, answer` lines), trains an encoder-decoder or hands its data to
TRL's SFTTrainer is no such run: nothing is said. Nor is one that reads its data from a file named for dialogue or
instructions (`conv_dicts/530_human_filtered_conv_pairs.pkl`: vadam5_task-aware-pruning's 'user: ... chatbot: ...'
exchanges, prepared beforehand): the template is in the file, not in the code."""
from __future__ import annotations

import ast
import builtins
import re

from .syntax import called_name, dotted, unwrapped_calls

# How a notebook sets the labels of a causal LM to its inputs: the collator (mlm=False), run_clm's group_texts
_LM_COLLATOR = "DataCollatorForLanguageModeling"
_BLOCK_CONCATENATION = "group_texts"
# What writes an example from a template: a prompt format's markers, a chat template, TRL's formatting hook
_TEMPLATE_MARKERS = re.compile(r"###|(?i:instruction|response)|<\|im_start\|>|\[INST\]|<start_of_turn>|<\|user\|>|"
                               r"<\|assistant\|>|Question:|Answer:|<human>|<bot>")
_TEMPLATE_CALLS = ("apply_chat_template", "formatting_func")
# A tokenizer's special tokens that, joining an example's parts, mark turns or fields
_TURN_SEPARATORS = ("eos_token", "sep_token", "bos_token")
# transformers' datasets of a text file's lines (called with file_path=; StaticOwl_dpnlp's own class of that
# name is not)
_FILE_DATASETS = ("TextDataset", "LineByLineTextDataset")
# Data or models that are not plain text for a causal LM (see the module docstring)
_NOT_RAW_TEXT_CALLS = re.compile(r"^(?:DataCollatorForSeq2Seq|SFTTrainer|"
                                 r"\w*Seq2Seq\w*|\w*ForConditionalGeneration|\w*ForMaskedLM|T5\w*)$")


def raw_text_lm(trees: list) -> str | None:
    """What says the cells that ran (`trees`) train a causal LM on raw text with labels = input_ids (module
    docstring), or None."""
    how = _labels_are_inputs(trees)
    if how is None or _calls_code_not_shown(trees) or _dialogue_file_read(trees) or any(
            _formats_examples(node) for tree in trees for node in ast.walk(tree)):
        return None
    return how


# A data file's name that says its examples are exchanges or instructions, not running text (its words, split at
# anything not a letter: `530_human_filtered_conv_pairs.pkl` -> conv, pairs)
_DIALOGUE_WORDS = frozenset({"conv", "convs", "conversation", "conversations", "dialog", "dialogs", "dialogue",
                             "dialogues", "chat", "chats", "instruction", "instructions", "pairs"})
_DATA_FILE = re.compile(r"\.(?:pkl|pickle|jsonl?|csv|tsv|txt|parquet)$", re.IGNORECASE)


def _dialogue_file_read(trees: list) -> bool:
    """Whether a call in the cells that ran is given a data file named for dialogue or instructions (a file path with
    a data file's extension, `_DIALOGUE_WORDS` among its words)."""
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Call):
            for arg in node.args + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _DATA_FILE.search(arg.value) \
                        and _DIALOGUE_WORDS & set(re.split(r"[^a-z]+", arg.value.lower())):
                    return True
    return False


def _calls_code_not_shown(trees: list) -> bool:
    """A bare function call whose definition is in no cell that ran and no import: the data may be built there
    (SolipsisAI_research's `prepare_data(df, ...)` is defined in a cell saved without its execution count, where its
    rows' turns are joined by the EOS token), so what the cells that ran show of the data is not all of it."""
    nodes = [n for tree in trees for n in ast.walk(tree)]
    known = set(dir(builtins))
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            known.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            known.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            known.add(node.id)
        elif isinstance(node, ast.arg):
            known.add(node.arg)
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in known for n in nodes)


def _labels_are_inputs(trees: list) -> str | None:
    """The code that makes a causal LM's labels its own input tokens: `item['labels'] = item['input_ids'].clone()`
    (the same encoding: a seq2seq's labels are its targets' input_ids), run_clm's group_texts, or
    DataCollatorForLanguageModeling(mlm=False); None where none is there."""
    found = None
    for node in (n for tree in trees for n in ast.walk(tree)):
        if isinstance(node, ast.Call) and called_name(node.func) == _LM_COLLATOR and _mlm_off(node):
            found = found or f"{_LM_COLLATOR}(mlm=False)"
        elif isinstance(node, ast.FunctionDef) and node.name == _BLOCK_CONCATENATION:
            found = found or f"run_clm's {_BLOCK_CONCATENATION} (texts concatenated and cut into blocks)"
        elif isinstance(node, ast.Assign) and any(_same_encoding_labels(t, node.value) for t in node.targets):
            found = found or f"{ast.unparse(node)[:80]} (labels = input_ids)"
    return found


def masked_lm(trees: list) -> str | None:
    """What says the cells that ran (`trees`) train a masked language model on its own objective: a `...ForMaskedLM`
    model class used and DataCollatorForLanguageModeling with its masking on (mlm=True, or left at that default),
    which masks tokens and makes the masked ones the labels, BERT's pre-training objective (yangoos57's domain
    adaptation of kcbert); None otherwise (mlm given by a name the code does not show included)."""
    nodes = [n for tree in trees for n in ast.walk(tree)]
    model = next((name for n in nodes if isinstance(n, (ast.Name, ast.Attribute))
                  and (name := called_name(n)).endswith(MASKED_LM_HEAD)), None)
    collator = next((n for n in nodes if isinstance(n, ast.Call) and called_name(n.func) == _LM_COLLATOR
                     and _mlm_on(n)), None)
    if model is None or collator is None:
        return None
    return f"{model} trained with {ast.unparse(collator)[:100]}"


MASKED_LM_HEAD = "ForMaskedLM"  # the class-name ending of a masked-LM model (BertForMaskedLM)


def simplified_text(trees: list) -> str | None:
    """The string in the cells that ran (`trees`) that names TinyStories (the dataset id `roneneldan/TinyStories`, a
    `TinyStories-train.txt` file): stories written with a 3-4 year old's vocabulary, held out far under what any
    model scores on ordinary English (llama2.c's 110M model: ~0.76 nats a Llama-2 token), so the per-character floors
    of ordinary text say nothing of it; None where no string names it."""
    return next((node.value for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Constant)
                 and isinstance(node.value, str) and _SIMPLIFIED_TEXT.search(node.value)), None)


_SIMPLIFIED_TEXT = re.compile(r"tiny_?stories", re.IGNORECASE)


def _mlm_on(call: ast.Call) -> bool:
    """The collator's masking on: mlm=True, or no mlm given (on by default; its second positional argument is mlm)."""
    given = [k.value for k in call.keywords if k.arg == "mlm"] + call.args[1:2]
    if any(k.arg is None for k in call.keywords) and not given:
        return False  # `**kwargs` the code does not show may set it
    return not given or (isinstance(given[0], ast.Constant) and given[0].value is True)


def _mlm_off(call: ast.Call) -> bool:
    return any(k.arg == "mlm" and isinstance(k.value, ast.Constant) and k.value.value is False for k in call.keywords)


def _same_encoding_labels(target: ast.expr, value: ast.expr) -> bool:
    """`X['labels'] = X['input_ids']` (`.clone()`, `.copy()`, `list(...)` of it): one encoding's own tokens."""
    labels = key_of(target, "labels")
    return labels is not None and labels == key_of(unwrapped(value), "input_ids")


def unwrapped(value: ast.expr) -> ast.expr:
    """`X` of `X.clone()`, `X.copy()`, `X.detach()`, `list(X)`, `copy.deepcopy(X)`."""
    return unwrapped_calls(value, ("clone", "copy", "detach"), ("list", "deepcopy"), bare_methods=True)


def key_of(node: ast.expr, key: str) -> str | None:
    """`X` of `X['key']`, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == key:
        return dotted(node.value)
    return None


def _formats_examples(node: ast.AST) -> bool:
    """A node that writes examples from a template or from several fields, or builds data or a model that is not
    plain text for a causal LM (module docstring)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(_TEMPLATE_MARKERS.search(node.value))
    if isinstance(node, ast.JoinedStr):  # LevOssadtchi's f"Rate: {row['rate']}, Text: {row['Text']}"
        return _fields_in([v.value for v in node.values if isinstance(v, ast.FormattedValue)]) >= 2
    # Ngwaru's sample["prompt"]+"\n"+sample["completion"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _fields_in(added(node)) >= 2
    if not isinstance(node, ast.Call):
        return False
    if _joined_by_a_special_token(node):
        return True
    name = called_name(node.func)
    if name == "format" and _fields_in(node.args + [k.value for k in node.keywords]) >= 2:
        return True
    if name in _FILE_DATASETS and any(k.arg == "file_path" for k in node.keywords):
        return True
    return name in _TEMPLATE_CALLS or bool(_NOT_RAW_TEXT_CALLS.match(name)) or any(
        k.arg in _TEMPLATE_CALLS + ("text_target",) for k in node.keywords)


def _joined_by_a_special_token(call: ast.Call) -> bool:
    """`f"{tokenizer.eos_token}".join(row.values)`: one example's parts (a row's values, or a literal list of them)
    joined by the tokenizer's end-of-text or separator token are a dialogue's context and response
    (SolipsisAI_research's DialoGPT fine-tune), not raw text. Documents joined by it (`eos.join(ds['text'])`,
    `eos.join(texts)`) are raw text concatenated for blocks, and stay so."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "join" and len(call.args) == 1):
        return False
    parts = call.args[0]
    one_examples_parts = (isinstance(parts, ast.Attribute) and parts.attr == "values") or (
        isinstance(parts, (ast.List, ast.Tuple)) and len(parts.elts) >= 2)
    return one_examples_parts and any(isinstance(n, ast.Attribute) and n.attr in _TURN_SEPARATORS
                                      for n in ast.walk(call.func.value))


def added(node: ast.expr) -> list:
    """The terms of `a + b + c`."""
    return added(node.left) + added(node.right) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) \
        else [node]


def _fields_in(values: list) -> int:
    """How many of `values` read a field of an example (`row['Text']`, `rate(row['rate'])`)."""
    return sum(any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)
                   for n in ast.walk(value)) for value in values)
