"""What says a notebook's (or a log-writing script's) code trains a causal LM on prompt / response pairs: it writes each
example from a prompt-side value and a response-side one in one string (BlayvasD_GPT-Histories'
`f"{prompt} {self.tokenizer.sep_token} {completion}"`, SahilSheikh12299's `f'[start]{question}[end]{answer}'`,
hcygit1's `f"Question:\\n{prompt}\\n\\nAnswer:\\n{answer}"`) and trains the model on labels that are its own input
tokens (`model(x, labels=x)`, `labels=inputs['input_ids']`, `labels = batch["input_ids"].clone()`): the next-token loss
over a written prompt and its answer, supervised fine-tuning.

A string printed (a sample shown after training) writes no example, and neither side alone says a pair (a question
asked of a model trained on raw text). Values are told by their names: a variable's, a field's key, an attribute's."""
from __future__ import annotations

import ast
import re

from .data import added, key_of, unwrapped
from .syntax import called_name

_PROMPT_SIDE = frozenset({"prompt", "prompts", "question", "questions", "instruction", "instructions", "query"})
_RESPONSE_SIDE = frozenset({"completion", "completions", "answer", "answers", "response", "responses", "reply"})


def prompt_response_lm(trees: list) -> str | None:
    """The string that writes a prompt and its response into one example, where the cells that ran (`trees`) also
    train on labels that are the input tokens (module docstring); else None."""
    nodes = [n for tree in trees for n in ast.walk(tree)]
    if not any(_labels_from_inputs(n) for n in nodes):
        return None
    printed = {id(n) for call in nodes if isinstance(call, ast.Call) and called_name(call.func) == "print"
               for n in ast.walk(call)}
    generated = _bound_to_generations(nodes)
    return next((ast.unparse(n)[:100] for n in nodes if id(n) not in printed and _writes_a_pair(n, generated)), None)


# What gives a model's own text: a response bound to it is a sample the run wrote out, not a training example
_GENERATIONS = ("generate", "decode", "batch_decode")


def _bound_to_generations(nodes: list) -> set[str]:
    """The names bound to what a model generates (`response = tok.decode(model.generate(ids)[0])`)."""
    return {t.id for n in nodes if isinstance(n, ast.Assign) and any(
        isinstance(c, ast.Call) and called_name(c.func) in _GENERATIONS for c in ast.walk(n.value))
        for t in n.targets if isinstance(t, ast.Name)}


def _writes_a_pair(node: ast.AST, generated: set[str]) -> bool:
    """An f-string, a `+` of strings or a `.format(...)` that holds a prompt-side and a response-side value, the
    response not one the model generated (`generated`: a sample written to a file or a list after an epoch)."""
    if isinstance(node, ast.JoinedStr):
        values = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        values = added(node)
    elif isinstance(node, ast.Call) and called_name(node.func) == "format":
        values = node.args + [k.value for k in node.keywords]
    else:
        return False
    if any(isinstance(v, ast.Name) and v.id in generated for v in values):
        return False
    words = {w for value in values for w in _name_words(value)}
    return bool(words & _PROMPT_SIDE) and bool(words & _RESPONSE_SIDE)


def _name_words(value: ast.expr) -> set[str]:
    """The words of a value's name: `prompt`, `entry["completion"]` -> completion, `row.answer` -> answer,
    `sample["user_question"]` -> user, question."""
    if isinstance(value, ast.Name):
        name = value.id
    elif isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value,
                                                                                                    str):
        name = value.slice.value
    elif isinstance(value, ast.Attribute):
        name = value.attr
    else:
        return set()
    return set(re.split(r"[^a-z]+", name.lower()))


def _labels_from_inputs(node: ast.AST) -> bool:
    """`model(x, labels=x)`, `model(**inputs, labels=inputs['input_ids'])` or `labels = batch['input_ids'].clone()`."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "labels" for t in node.targets) and _input_ids(node.value)
    if not isinstance(node, ast.Call):
        return False
    given = [k.value for k in node.keywords if k.arg == "labels"]
    if not given:
        return False
    inputs = {ast.dump(a) for a in node.args}
    return _input_ids(given[0]) or ast.dump(given[0]) in inputs


def _input_ids(value: ast.expr) -> bool:
    """`X['input_ids']` (`.clone()`, `.copy()`, `list(...)` of it)."""
    return key_of(unwrapped(value), "input_ids") is not None
