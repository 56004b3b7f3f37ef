"""Block names from tensor names: `model.layers.21.self_attn.q_proj.weight` -> `model.layers.21`.

A block is the tensor-name prefix up to and including the layer index. Wrapper prefixes
(`module.` from DDP, `_orig_mod.` from torch.compile, `_fsdp_wrapped_module.`,
`_checkpoint_wrapped_module.`, PEFT's `base_model.model.`) are removed first, so a PEFT
adapter tensor and the base model tensor it adapts land in the same block. The pattern is
the one FORMATS.md section 9 tested on 25 names.

    >>> block_of("base_model.model.model.layers.21.self_attn.q_proj.lora_A.weight")
    'model.layers.21'
    >>> block_of("transformer.h.3.mlp.w1.weight"), block_of("lm_head.weight")
    ('transformer.h.3', None)
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

_LEADING_WRAPPER = re.compile(
    r"^(?:module\.|_orig_mod\.|_fsdp_wrapped_module\.|_checkpoint_wrapped_module\.|base_model\.model\.)"
)
_INNER_WRAPPER = re.compile(r"(?:_fsdp_wrapped_module|_checkpoint_wrapped_module|_orig_mod)\.")
# The first block container in the name: prefix (the tower), container, index, rest.
_BLOCK_START = r"^(?P<prefix>(?:\w+\.)*?)(?P<container>layers|h|blocks|block|layer)\.(?P<idx>\d+)"
_BLOCK = re.compile(_BLOCK_START + r"\.(?P<rest>.+)$")
_BLOCK_OR_TENSOR = re.compile(_BLOCK_START + r"(?:\.|$)")  # a block name itself, or a tensor in it
_DIGITS = re.compile(r"(\d+)")


def strip_wrappers(name: str) -> str:
    """`name` without DDP / FSDP / torch.compile / activation-checkpointing / PEFT wrapper parts.

    >>> strip_wrappers("module._orig_mod.model.layers.0._checkpoint_wrapped_module.mlp.up_proj.weight")
    'model.layers.0.mlp.up_proj.weight'
    """
    while True:
        stripped = _LEADING_WRAPPER.sub("", name, count=1)
        if stripped == name:
            break
        name = stripped
    return _INNER_WRAPPER.sub("", name)


@lru_cache(maxsize=65536)
def block_of(name: str) -> str | None:
    """The block a tensor belongs to (`model.layers.21`, `transformer.h.21`), or None.

    None means the tensor lies outside the repeated blocks: embeddings, final norm, lm_head.

    >>> block_of("model.language_model.layers.3.mlp.down_proj.weight")
    'model.language_model.layers.3'
    >>> block_of("module.transformer.h.11.attn.c_attn.weight")
    'transformer.h.11'
    """
    m = _BLOCK.match(strip_wrappers(name))
    if m is None:
        return None
    return f"{m.group('prefix')}{m.group('container')}.{m.group('idx')}"


def block_index(name: str) -> int | None:
    """The block number of a tensor or block name (`transformer.h.21...`, `model.layers.21`), or None.

    >>> block_index("model.layers.21"), block_index("transformer.h.3.mlp.w1.weight"), block_index("lm_head.weight")
    (21, 3, None)
    """
    m = _BLOCK_OR_TENSOR.match(strip_wrappers(name))
    return int(m.group("idx")) if m else None


def block_sort_key(name: str) -> tuple:
    """Natural order for block and tensor names: `layers.2` before `layers.10`.

    >>> sorted(["model.layers.10", "model.layers.2"], key=block_sort_key)
    ['model.layers.2', 'model.layers.10']
    """
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(name) if part)


def blocks_in_order(tensor_names) -> list[str]:
    """The distinct blocks of `tensor_names`, in natural order (tensors outside blocks left out).

    >>> blocks_in_order(["transformer.h.10.mlp.w1.weight", "transformer.h.9.ln_1.weight", "lm_head.weight"])
    ['transformer.h.9', 'transformer.h.10']
    """
    blocks = {block_of(n) for n in tensor_names}
    blocks.discard(None)
    return sorted(blocks, key=block_sort_key)


_INDEXED = re.compile(r"^(?P<prefix>.*?)(?P<idx>\d+)$")


def block_ranges(blocks: Iterable[str]) -> str:
    """Blocks written compactly: consecutive indices of one container joined as a range.

    >>> block_ranges(["transformer.h.23", "transformer.h.21", "transformer.h.22", "lm_head"])
    'lm_head, transformer.h.21-23'
    """
    groups: dict[str, list[int]] = {}
    plain: list[str] = []
    for block in sorted(set(blocks), key=block_sort_key):
        m = _INDEXED.match(block)
        if m:
            groups.setdefault(m["prefix"], []).append(int(m["idx"]))
        else:
            plain.append(block)
    parts = plain + [prefix + run for prefix, idx in groups.items() for run in _runs(idx)]
    return ", ".join(sorted(parts, key=block_sort_key))


def _runs(indices: list[int]) -> list[str]:
    runs, start = [], indices[0]
    for prev, cur in zip(indices, indices[1:] + [None]):
        if cur is None or cur != prev + 1:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
            start = cur
    return runs


def module_of(tensor: str) -> str:
    """The block of a tensor, or else its module: embeddings, final norm and lm_head keep their own name.

    >>> module_of("model.layers.3.mlp.up_proj.weight"), module_of("lm_head.weight")
    ('model.layers.3', 'lm_head')
    """
    return block_of(tensor) or tensor.rsplit(".", 1)[0]


def module_sort_key(module: str) -> tuple:
    """Embeddings first, then the blocks in order, then the rest (final norm, lm_head).

    >>> sorted(["lm_head", "model.layers.1", "model.embed_tokens", "model.layers.0"], key=module_sort_key)
    ['model.embed_tokens', 'model.layers.0', 'model.layers.1', 'lm_head']
    """
    if block_of(module + ".x") is not None:
        return (1, block_sort_key(module))
    return (0 if "embed" in module or module.endswith(("wte", "wpe")) else 2, block_sort_key(module))
