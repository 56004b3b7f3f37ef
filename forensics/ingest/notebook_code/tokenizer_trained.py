"""A notebook that trains its own tokenizer: its vocabulary is made in this run, so no trained model's embeddings know
its tokens, and the model that reads them starts from random weights (the console's `Training tokenizer` line says
the same, `console_facts`). Drykx_GPT2-Scratch: `tokenizer = BasicTokenizer(); tokenizer.train(corpus, vocab_size)`,
a byte-level BPE of 400 tokens, before a GPT built from the repository's own module.

`tokenizer_trained(trees)` gives the call (`BasicTokenizer.train`) or None."""
from __future__ import annotations

import ast
import re

from .syntax import called_name, owner_name

# A tokenizer class (Karpathy's minbpe `BasicTokenizer`, the tokenizers library's `Tokenizer(BPE())`,
# `ByteLevelBPETokenizer`) and what trains one: its `train` / `train_from_iterator`, a pretrained tokenizer's
# `train_new_from_iterator` (a new vocabulary learnt from the run's text), SentencePiece's trainer
_TOKENIZER_CLASS = re.compile(r"Tokenizer(?:Fast)?$")
_TRAINS = ("train", "train_from_iterator")
_TRAINS_ANEW = "train_new_from_iterator"
_SENTENCEPIECE_TRAINER = "SentencePieceTrainer"


def tokenizer_trained(trees: list) -> str | None:
    """`Class.train` of the first call in the cells that ran (`trees`) that trains a tokenizer, else None."""
    tokenizers = {target.id: called_name(node.value.func) for tree in trees for node in ast.walk(tree)
                  if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                  and _TOKENIZER_CLASS.search(called_name(node.value.func))
                  for target in node.targets if isinstance(target, ast.Name)}
    for tree in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name, owner = called_name(node.func), owner_name(node.func)
            if name in _TRAINS and owner in tokenizers:
                return f"{tokenizers[owner]}.{name}"
            if name == _TRAINS_ANEW or owner == _SENTENCEPIECE_TRAINER and name.lower() == "train":
                return f"{owner}.{name}"
    return None
