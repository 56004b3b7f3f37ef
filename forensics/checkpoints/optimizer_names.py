"""Which parameter each index of a saved optimizer state is.

A torch optimizer saves parameters by index only. The HF Trainer (`Trainer.create_optimizer`)
builds two param groups from the model's trainable parameters in module order
(`named_parameters()`): those that get weight decay, then those that don't (biases and norm
weights: `get_decay_parameter_names`), so the indices run 0..k-1 over the first group and k.. over
the second. A LoRA run holds only the adapter's parameters.

The checkpoint's own weight files name the parameters but not their module order (safetensors
sorts its header), so the order is rebuilt and checked by shape, index by index:

1. "name order": blocks in order, and inside a block the usual module order (attention before the
   MLP, q/k/v/o, a MoE's router before its experts, numbered experts as numbers, gate/up/down, weight
   before bias); outside the blocks, embeddings first, the rest
   by module name, weight before bias. When two parameters of one block and group share a shape,
   the shapes cannot tell them apart: the block is right, the name may not be, and the mapping
   says so. Outside the blocks the order itself is a guess (a final LayerNorm's weight and bias, an
   untied lm_head beside the embeddings), so two parameters there of one group and shape leave
   both their modules ambiguous.
2. "model definition": the model's own `named_parameters()`, built on torch's meta device from the
   checkpoint's `config.json` (needs torch and transformers; no weights are allocated), tried when
   the name order is ambiguous. Importing them takes seconds, and most checkpoints' blocks have
   parameters of one shape (q_proj and o_proj, k_proj and v_proj), so `exact=False` leaves it to
   `exact_names`, called only when a name in an ambiguous block is shown (a non-finite moment).
   Also tried, whatever `exact` says, when the name order does not fit at all (GPT-2's blocks register
   mlp.c_fc before mlp.c_proj and wte before wpe; T5 and BART have their own orders): the alternative is
   no names at all.
3. "indices": neither fits; rows keep the index and no block is claimed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .blocks import block_of, block_sort_key, module_of, strip_wrappers

# transformers Trainer.get_decay_parameter_names (5.x): names matching these (lower-cased) get no decay.
_NO_DECAY_NAMES = re.compile(r"bias|layernorm|rmsnorm|(?:^|\.)norm(?:$|\.)|_norm(?:$|\.)")
# nn.LayerNorm modules that the name patterns miss (GPT-2's ln_1 / ln_2 / ln_f): excluded by type there.
_LAYERNORM_MODULES = re.compile(r"(?:^|\.)ln_\w+\.")
# Older transformers (< 4.39): only biases and LayerNorm modules.
_OLD_NO_DECAY = re.compile(r"bias|layernorm|(?:^|\.)ln_\w+\.")


def _no_decay_now(name: str) -> bool:
    low = name.lower()
    return bool(_NO_DECAY_NAMES.search(low) or _LAYERNORM_MODULES.search(low))


def _no_decay_old(name: str) -> bool:
    return bool(_OLD_NO_DECAY.search(name.lower()))


_DECAY_RULES: tuple[Callable[[str], bool], ...] = (_no_decay_now, _no_decay_old)

# Module order inside a block, as the common model files register their submodules.
_PART_RANK = {part: rank for rank, part in enumerate((
    "ln_1", "self_attn", "attn", "attention", "self_attention", "q_proj", "k_proj", "v_proj", "qkv_proj",
    "query_key_value", "c_attn", "o_proj", "dense", "c_proj", "ln_2", "mlp", "feed_forward", "ffn", "router", "gate",
    "experts", "gate_proj", "up_proj", "gate_up_proj", "c_fc", "down_proj", "input_layernorm",
    "post_attention_layernorm", "lora_A", "lora_B", "weight", "bias"))}
_EMBEDDING = re.compile(r"embed|wte|wpe|word_embeddings|tok_embeddings")


@dataclass(frozen=True)
class NameMapping:
    """Parameter names by optimizer index, and how they were found.

    Fields:
        names: index -> parameter name (empty when `how` is "indices").
        how: "name order", "model definition" or "indices".
        note: what a reader should know (ambiguous names, why it fell back), "" when nothing.
        ambiguous: blocks, and modules outside them, whose names the shapes cannot order (empty once the
            model definition named them).
        uncertain: the indices whose names may be swapped with another's (those sharing a shape there).
    """

    names: dict[int, str]
    how: str
    note: str = ""
    ambiguous: frozenset[str] = frozenset()
    uncertain: frozenset[int] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        return {"how": self.how, "note": self.note or None}


def map_parameter_names(group_params: list[tuple[int, ...]], shapes: dict[int, tuple[int, ...] | None],
                        weights: dict[str, tuple[int, ...]], config_folder: Path | None = None,
                        exact: bool = True) -> NameMapping:
    """Names for the optimizer's indices.

    Args:
        group_params: each param group's indices, in group order.
        shapes: index -> the shape of its saved moments (None when it has no state yet).
        weights: the checkpoint's trainable tensors, name -> shape (the adapter's for a LoRA run).
        config_folder: the checkpoint folder, for the model-definition order (config.json).
        exact: build the model for exact names where the name order is ambiguous; False leaves the
            name order (blocks exact) and `ambiguous` for a later `exact_names`.
    """
    mapping = _fit(sorted(weights, key=_name_order_key), group_params, shapes, weights)
    if mapping is None:
        return _defined_or_indices(group_params, shapes, weights, config_folder)
    uncertain = frozenset(i for indices in _sharing_a_shape(mapping, group_params, shapes) for i in indices)
    if not uncertain:
        return NameMapping(mapping, "name order")
    ambiguous = frozenset(module_of(mapping[i]) for i in uncertain)
    guess = NameMapping(mapping, "name order", _ambiguity_note(
        mapping, group_params, shapes, "exact names are looked up for the parameters a report names"),
        ambiguous, uncertain)
    return exact_names(guess, group_params, shapes, weights, config_folder) if exact else guess


def exact_names(mapping: NameMapping, group_params: list[tuple[int, ...]], shapes: dict[int, tuple[int, ...] | None],
                weights: dict[str, tuple[int, ...]], config_folder: Path | None) -> NameMapping:
    """`mapping` with its ambiguous blocks named from the model definition (module docstring, step 2); as it
    was, with a note saying so, where the model cannot be built."""
    if not mapping.ambiguous:
        return mapping
    exact, why_not = _definition_fit(group_params, shapes, weights, config_folder)
    if exact is not None:
        return NameMapping(exact, "model definition")
    note = _ambiguity_note(mapping.names, group_params, shapes, why_not)
    return NameMapping(mapping.names, mapping.how, note, mapping.ambiguous, mapping.uncertain)


def _defined_or_indices(group_params, shapes, weights: dict[str, tuple[int, ...]],
                        config_folder: Path | None) -> NameMapping:
    """Names from the model definition where the name order does not fit at all (module orders the usual one
    misses: GPT-2's Conv1D blocks, T5, BART), else "indices". Seconds, but only for a state otherwise shown
    without names or blocks."""
    exact, why_not = _definition_fit(group_params, shapes, weights, config_folder)
    if exact is not None:
        return NameMapping(exact, "model definition")
    return NameMapping({}, "indices", (
        f"the {sum(len(g) for g in group_params)} optimizer entries do not match the checkpoint's "
        f"{len(weights)} tensors in count and shape; shown by index, without blocks ({why_not})"))


def _definition_fit(group_params, shapes, weights: dict[str, tuple[int, ...]],
                    config_folder: Path | None) -> tuple[dict[int, str] | None, str]:
    """{index: name} in the module order of the model built from config.json, and ""; (None, why not)."""
    defined, why_not = _defined_order(config_folder, set(weights)) if config_folder is not None else (
        None, _NO_CONFIG)
    exact = _fit(defined, group_params, shapes, weights) if defined else None
    return (exact, "") if exact is not None else (None, why_not or _NOT_THIS_MODEL)


# Why the model definition gave no names (the note's last words).
_NO_CONFIG = "no config.json beside the optimizer state to build the model from, as beside an adapter's"
_NO_TRANSFORMERS = "install torch and transformers for exact names"
_NOT_BUILT = "the installed transformers cannot build the model of its config.json"
_NOT_THIS_MODEL = "the model of its config.json does not hold these parameters in this order"


def _ambiguity_note(names: dict[int, str], group_params, shapes, how_named: str) -> str:
    """The note of a mapping whose names may be swapped: where (blocks counted, modules outside them named),
    what stays exact, and `how_named` (what names them exactly, or why nothing could)."""
    shared = _sharing_a_shape(names, group_params, shapes)
    modules = [{module_of(names[i]) for i in indices} for indices in shared]
    blocks = {m for held in modules for m in held if block_of(m + ".weight") == m}
    others = sorted({m for held in modules for m in held} - blocks)
    where = " and ".join(part for part in (f"{len(blocks)} block(s)" if blocks else "", ", ".join(others)) if part)
    mixed = sorted({m for held in modules if len(held) > 1 for m in held})
    exact = "per-block figures are exact" + (
        f", but those of {', '.join(mixed)} may be swapped with each other" if mixed else "")
    return f"in {where} some parameters share a shape, so their names may be swapped; {exact} ({how_named})"


def _name_order_key(name: str) -> tuple:
    plain = strip_wrappers(name)
    block = block_of(plain)
    if block is None:  # by module, and inside one weight before bias, as torch's modules register them
        stage = 0 if _EMBEDDING.search(plain) else 2
        module, _, leaf = plain.rpartition(".")
        return (stage, (), (module, _PART_RANK.get(leaf, len(_PART_RANK))), plain)
    rest = plain[len(block) + 1:].split(".")
    # Numbered parts (experts.2, expert_10) as numbers: a ModuleList registers 2 before 10.
    ranks = tuple((_PART_RANK.get(part, len(_PART_RANK)), block_sort_key(part)) for part in rest)
    return (1, block_sort_key(block), ranks, plain)


def _fit(ordered: list[str] | None, group_params, shapes, weights) -> dict[int, str] | None:
    """{index: name} when some decay rule splits `ordered` into the saved groups shape for shape."""
    if not ordered:
        return None
    for no_decay in _DECAY_RULES:
        if len(group_params) == 2:
            split = [[n for n in ordered if not no_decay(n)], [n for n in ordered if no_decay(n)]]
        elif len(group_params) == 1:
            split = [ordered]
        else:
            return None
        if any(len(names) != len(indices) for names, indices in zip(split, group_params)):
            continue
        mapping = {i: n for names, indices in zip(split, group_params) for i, n in zip(indices, names)}
        if all(shapes.get(i) in (None, tuple(weights[n])) for i, n in mapping.items()):
            return mapping
    return None


def _sharing_a_shape(mapping: dict[int, str], group_params, shapes) -> list[list[int]]:
    """The indices whose names the shapes cannot settle, in sets that could be swapped among themselves: two or
    more of one group and shape in one block, or outside the blocks (whose module order the name order only
    guesses)."""
    held: dict[tuple, list[int]] = {}
    for group, indices in enumerate(group_params):
        for i in indices:
            held.setdefault((group, block_of(mapping[i]), shapes.get(i)), []).append(i)
    return [indices for indices in held.values() if len(indices) > 1]


def _defined_order(folder: Path, known: set[str]) -> tuple[list[str] | None, str]:
    """The trainable parameter names in module order from the model class of `folder/config.json`, built on the
    meta device, and ""; (None, why not) when there is no config.json, torch/transformers are missing or the model
    cannot be built."""
    if not (folder / "config.json").is_file():
        return None, _NO_CONFIG
    try:
        import torch
        import transformers
    except ImportError:
        return None, _NO_TRANSFORMERS
    try:
        config = transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True)
        architecture = (getattr(config, "architectures", None) or [None])[0]
        cls = getattr(transformers, architecture, None) if architecture else None
        if cls is None:
            return None, _NOT_BUILT
        with torch.device("meta"):
            model = cls(config)
        order = [name for name, _ in model.named_parameters()]
    except Exception:  # any model the installed transformers cannot build: fall back, never fail the scan
        return None, _NOT_BUILT
    # Tensors the model holds as buffers (BART's final_logits_bias) are saved but never trained: left out here,
    # and the fit checks the rest against the optimizer count for count and shape.
    held = [n for n in order if n in known]
    return (held, "") if held else (None, _NOT_THIS_MODEL)
