"""What a notebook says of a character-level language model's text: that a token is one character (its vocabulary is
the set of the text's characters), how many characters the text holds, and how many characters a training batch and
an epoch take in. From these the passes over the text are counted (analyzers.char_floor judges them).

`char_corpus(trees, outputs)` gives, in the run configuration's names: `data.char_vocabulary` (the assignment that
builds the vocabulary from `set(text)`, as written: where one token = one character comes from), `data.text_chars`
(the text's length the outputs print, with `data.text_chars_line`), `data.chars_a_batch` (batch_size x the window's
length, both literals in the code) and `data.batches_an_epoch` (the count of a Keras 3 fit's completed bar,
`390/390 ━━━`).
Nothing is said without the vocabulary, and no vocabulary where the code also calls a subword tokenizer (a BPE or
SentencePiece model whose pieces hold several characters: Karpathy's lecture redone with SentencePiece keeps
`chars = sorted(list(set(text)))` from the lecture)."""
from __future__ import annotations

import ast
import re

from .syntax import called_name, dotted

# A subword tokenizer named in the code: its tokens are not characters, whatever else the code builds
SUBWORD_TOKENIZER = re.compile(r"tiktoken|sentencepiece|SentencePiece|AutoTokenizer|GPT2Tokenizer|\w+TokenizerFast|"
                                r"ByteLevelBPETokenizer|from tokenizers import|BertTokenizer|\bBPE\(")
# The text's length as printed: Karpathy's `length of dataset in characters:  1115394`, `Text length: 100000`,
# `Total characters: 600901`, `Corpus length: 600901` (not `Number of unique characters: 61`, the vocabulary)
_TEXT_LENGTH = re.compile(r"^[ \t]*(?:length of (?:the )?(?:dataset|text|corpus|data)(?: in characters)?|text length|"
                          r"(?:total|number of) characters(?: in (?:the )?(?:text|dataset|corpus|data))?|"
                          r"(?:corpus|dataset|text) length(?: in characters)?)[ \t]*[:=]?[ \t]*(\d{1,3}(?:,\d{3})+|\d+)"
                          r"(?:[ \t]+characters)?[ \t]*$", re.IGNORECASE | re.MULTILINE)
# The names a window's length is bound to in char-level recipes (nanoGPT's block_size, Keras' maxlen, ...)
_WINDOW_NAMES = frozenset({"block_size", "seq_length", "seq_len", "max_seq_length", "max_seq_len", "sequence_length",
                           "context_length", "context_size", "maxlen", "max_len", "seq_size", "window_size"})
_BATCH_NAME = "batch_size"
# A Keras 3 bar at its epoch's end: `390/390 ━━━━ 9s 18ms/step - accuracy: ...` (colour codes left in or not),
# which counts batches; an older `[====]` bar may count samples (Keras 1: `600860/600860 [====` at batch 64)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
_KERAS_DONE_BAR = re.compile(r"^[ \t]*(\d+)/(\d+)[ \t]+━", re.MULTILINE)


def char_corpus(trees: list, outputs: str) -> dict:
    """The run-configuration values of a character-level text (module docstring), {} where the vocabulary is not
    the text's characters."""
    vocabulary = char_vocabulary(trees)
    if vocabulary is None:
        return {}
    found: dict = {"data.char_vocabulary": vocabulary}
    length = _TEXT_LENGTH.search(outputs)
    if length:
        found["data.text_chars"] = int(length.group(1).replace(",", ""))
        found["data.text_chars_line"] = length.group(0).strip()
    found.update(batch_values(trees, outputs, "data.chars_a_batch"))
    return found


def batch_values(trees: list, outputs: str, batch_key: str) -> dict:
    """`batch_key`: batch_size x the window's length, both int literals in the cells (the tokens a batch takes in,
    whatever a token is), and `data.batches_an_epoch`: the batches of the last Keras 3 fit's completed bar; each where
    the notebook says it."""
    found = {}
    literals = _int_literals(trees)
    window = next((literals[name] for name in _WINDOW_NAMES if name in literals), None)
    if window and literals.get(_BATCH_NAME):
        found[batch_key] = window * literals[_BATCH_NAME]
    bars = [int(done) for done, total in _KERAS_DONE_BAR.findall(ANSI.sub("", outputs)) if done == total]
    if bars:
        found["data.batches_an_epoch"] = bars[-1]  # the last fit's
    return found


def unparsed(tree: ast.AST) -> str:
    """A tree's code written back; "" where it is too deep to walk (`total = x + x + ...` of a thousand terms
    parses, but `ast.unparse` overflows Python's stack on it): such a cell names no tokenizer."""
    try:
        return ast.unparse(tree)
    except RecursionError:
        return ""


def char_vocabulary(trees: list) -> str | None:
    """The assignment (as written) that binds a name to the set of a text's characters (`chars =
    sorted(list(set(text)))`, `self.chars = sorted(set(text))`) whose length the code takes (`vocab_size =
    len(chars)`), where no subword tokenizer is named in the code; else None."""
    if any(SUBWORD_TOKENIZER.search(unparsed(tree)) for tree in trees):
        return None
    measured = {dotted(node.args[0]) for tree in trees for node in ast.walk(tree)
                if isinstance(node, ast.Call) and called_name(node.func) == "len" and len(node.args) == 1}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and _set_of_a_name(node.value) \
                    and dotted(node.targets[0]) in measured:
                return f"{dotted(node.targets[0])} = {ast.unparse(node.value)}"
    return None


def _set_of_a_name(node: ast.AST) -> bool:
    """`set(text)`, also inside `sorted(...)` and `list(...)`."""
    while isinstance(node, ast.Call) and called_name(node.func) in ("sorted", "list") and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Call) and called_name(node.func) == "set" and len(node.args) == 1 \
        and isinstance(node.args[0], (ast.Name, ast.Attribute))


def _int_literals(trees: list) -> dict[str, int]:
    """The names bound to a positive int literal in the cells (`batch_size = 256`), the last binding standing."""
    found: dict[str, int] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Constant) and type(node.value.value) is int and node.value.value > 0:
                found[node.targets[0].id] = node.value.value
    return found
