"""Labels that count padding: a notebook that tokenizes with padding, copies the padded `input_ids` into the labels
and trains them with a plain HF `Trainer` (or `Seq2SeqTrainer`) with nothing that masks the pad ids to -100.

The model's loss ignores only label -100 (CrossEntropyLoss's ignore_index), so every pad position is then scored:
the loss falls to a level set by how much of each row is padding (trivially predicted after the first pad), and says
little about the task. The HF docs and course replace pad ids in labels with -100 for this reason;
DataCollatorForLanguageModeling(mlm=False) does it itself, TRL's DataCollatorForCompletionOnlyLM and Unsloth's
train_on_responses_only mask their own labels, DataCollatorForSeq2Seq pads labels with -100 but leaves the
pad ids already in pre-padded labels (so it is no mask here, unless `label_pad_token_id` is set by hand, which
says the author thought of it). TRL's SFTTrainer is left out, a silence rather than a claim: up to TRL 0.16 its default
collator was DataCollatorForLanguageModeling(mlm=False), which masks the pad id; from 0.17
its own collator masks only the padding it adds and keeps every id it is given (a `labels` column from 0.19, else
the input_ids; packing drops the column), so a notebook's own padding counts - and which release ran is seldom
plain in a notebook's code (galang006_medichat_llm's outputs print a warning only >= 0.21 has, and
sahabajalam_doctors-scribe-qlora names 0.27.1 in a comment: both count their pads, unsaid here).

A false "your labels include padding" is harm, so the fact is stated only where every part is plain in the code
(`label_flow`: a padded call followed to a labels copy) and no sign of masking is anywhere in the notebook's code
cells, run or not, comments aside (any `-100`, `ignore_index`, `label_pad_token_id`, a masking collator or trainer,
a `masked_fill`, a Trainer subclass's own `compute_loss`), and where the Trainer is given no collator of the
notebook's own (one may rebuild the labels). A hand-written loop is left out: its loss is the loop's own to compute.
"""
from __future__ import annotations

import ast
import re

from .cells import _count, _source, without_comments, cells_and_trees_that_ran
from .label_flow import LabelFlow, gathered, in_live_code, padded_kind
from .syntax import called_name

_MASKING = re.compile(r"-\s*100\b|ignore_index|label_pad_token_id|ignore_pad_token_for_loss|masked_fill|compute_loss"
                      r"|DataCollatorForLanguageModeling|DataCollatorForCompletionOnlyLM|SFTTrainer|SFTConfig"
                      r"|train_on_responses_only", re.IGNORECASE)
_PLAIN_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer"})
# collators that keep the labels they are given as they are (DataCollatorForSeq2Seq pads with -100 only what it pads)
_LABEL_KEEPING_COLLATORS = frozenset({"default_data_collator", "DefaultDataCollator", "DataCollatorWithPadding",
                                      "DataCollatorForSeq2Seq"})


def labels_with_padding(cells: list) -> str | None:
    """Where the notebook's code copies padded input_ids into the labels of a plain Trainer's data with no masking
    (module docstring), said with its cells and lines; None where it does not, or does not say so plainly."""
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    if _MASKING.search(without_comments("\n".join(_source(c) for c in code))):
        return None
    number = {id(c): i for i, c in enumerate(cells)}
    ran = [(_label(cell, number.get(id(cell), 0)), text, tree) for cell, text, tree in cells_and_trees_that_ran(cells)]
    trainers = _plain_trainer_calls([tree for _, _, tree in ran])
    flow = gathered(ran)
    if not trainers or not all(_keeps_labels(call, flow) for call in trainers):
        return None
    for value, scope, where in flow.sinks:
        found = padded_kind(flow, value, scope) if in_live_code(flow, scope) else None
        if found and found[0] == "ids":
            padded = "that same call" if found[1] == where else found[1]
            return f"{where} puts in the labels input_ids padded by {padded}, and no code masks the pad ids to -100"
    return None


def _label(cell: dict, index: int) -> str:
    count = _count(cell)
    return f"In [{count}]" if isinstance(count, int) else f"cell {index + 1}"


def _plain_trainer_calls(trees: list) -> list[ast.Call]:
    """The calls that build a plain HF Trainer, a subclass of one the notebook defines included."""
    classes = set(_PLAIN_TRAINERS)
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(called_name(b) in _PLAIN_TRAINERS for b in node.bases):
                classes.add(node.name)
    return [node for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
            and called_name(node.func) in classes]


def _keeps_labels(trainer: ast.Call, flow: LabelFlow) -> bool:
    """Whether the Trainer's collator keeps the labels as given: none passed, or one of HF's that does (built in the
    call, or in the notebook's one binding of the name passed)."""
    collator = next((k.value for k in trainer.keywords if k.arg == "data_collator"), None)
    if isinstance(collator, ast.Name) and len(flow.binds.get((None, collator.id), [])) == 1:
        collator = flow.binds[(None, collator.id)][0][1] or collator
    if collator is None or isinstance(collator, ast.Constant) and collator.value is None:
        return True
    name = called_name(collator.func) if isinstance(collator, ast.Call) else called_name(collator)
    return name in _LABEL_KEEPING_COLLATORS
