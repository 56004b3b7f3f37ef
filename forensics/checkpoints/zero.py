"""DeepSpeed ZeRO partitions read without deepspeed: the flat fp32 partitions back to parameter names.

A ZeRO save (`global_stepN/`, BIGSTACK.md section 1) keeps the 16-bit module weights in
`*model_states.pt` (empty placeholders under ZeRO-3) and, per data-parallel rank, a
`[bf16_]zero_pp_rank_{dp}_mp_rank_{mp}_optim_states.pt` holding that rank's slice of the fp32
master weights and of the Adam moments, as flat tensors. Both are read with `inert_torch_load`
(DeepSpeed's enum, loss scaler and `fragment_address` become Records; nothing executes).

Names per rank, the rules of DeepSpeed's own readers:
- ZeRO-1/2 and BF16_Optimizer: `param_slice_mappings[g][name] = fragment_address(numel, start)`,
  `start` relative to this rank's partition (deepspeed/utils/tensor_fragment.py
  `get_hp_fragment_mapping`; deepspeed/checkpoint/ds_to_universal.py `extract_zero_shards`).
  The moments are `base_optimizer_state['state'][g]`, laid out like the fp32 partition.
- ZeRO-3: every parameter is split on its own, `p = ceil(numel / world)` elements per rank, the
  last rank zero-padded; on a rank the pieces follow `param_shapes` order back to back across
  its sub-groups (deepspeed/utils/zero_to_fp32.py `zero3_partitioned_param_info`,
  `_zero3_merge_trainable_params`). The moments are `optimizer_state_dict['optimizer_state_dict']
  ['state'][k]`, laid out like `fp32_flat_groups[k]`.

A rank's fragment of `layers.1.weight` is the entry `layers.1.weight.fp32` (master copy),
`layers.1.weight.exp_avg` or `layers.1.weight.exp_avg_sq` of that rank's file, so the scan
says which ranks hold the damage; the padding is never read.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from .inert_load import Record, inert_torch_load
from .torch_file import TorchFile

ZERO_OPTIM_FILE = re.compile(r"zero_pp_rank_(?P<dp>\d+)_mp_rank_(?P<mp>\d+)_optim_states\.pt$")
MODEL_STATES_FILE = re.compile(r"model_states\.pt$")
MOMENTS = ("exp_avg", "exp_avg_sq")
MASTER_SUFFIX = ".fp32"
FRAGMENT_SUFFIXES = (MASTER_SUFFIX,) + tuple(f".{m}" for m in MOMENTS)


def rank_of(path) -> int | None:
    """The data-parallel rank of a ZeRO optim_states file, from its name (`zero_pp_rank_3_...` -> 3)."""
    m = ZERO_OPTIM_FILE.search(Path(path).name)
    return int(m.group("dp")) if m else None


def param_of(fragment_name: str) -> tuple[str, str]:
    """(parameter name, "fp32" | "exp_avg" | "exp_avg_sq" | "16-bit") of an entry name of a ZeRO checkpoint.

    >>> param_of("layers.1.weight.exp_avg_sq"), param_of("layers.1.weight")
    (('layers.1.weight', 'exp_avg_sq'), ('layers.1.weight', '16-bit'))
    """
    for suffix in sorted(FRAGMENT_SUFFIXES, key=len, reverse=True):
        if fragment_name.endswith(suffix):
            return fragment_name[: -len(suffix)], suffix[1:]
    return fragment_name, "16-bit"


class ZeroModelStates(TorchFile):
    """A `*model_states.pt`: the 16-bit `module` weights (ZeRO-3's empty placeholders left out)."""

    def __init__(self, path):
        state = _load_dict(path)
        module = state.get("module")
        torch = _torch(path)
        tensors = {k: v for k, v in (module or {}).items() if isinstance(v, torch.Tensor) and v.numel()}
        super().__init__(path, tensors)


class ZeroRankFile(TorchFile):
    """One rank's `*optim_states.pt`: its fragment of each parameter's fp32 master copy and Adam moments."""

    def __init__(self, path):
        path = Path(path)
        inner = _load_dict(path).get("optimizer_state_dict")
        if not isinstance(inner, dict):
            raise UnreadableFile(path, "no optimizer_state_dict: not a DeepSpeed ZeRO optimizer state file")
        if "fp32_flat_groups" in inner:
            tensors = _zero3_fragments(path, inner)
        else:
            tensors = _zero12_fragments(path, inner)
        super().__init__(path, tensors)
        stage = inner.get("zero_stage")
        self.metadata = {"zero_stage": stage.value if isinstance(stage, Record) else stage, "rank": rank_of(path)}


def _torch(path):
    from .torch_file import import_torch

    return import_torch(path)


def _load_dict(path) -> dict:
    obj = inert_torch_load(path)
    if not isinstance(obj, dict):
        raise UnreadableFile(path, f"holds a {type(obj).__name__}, not the dict DeepSpeed saves")
    return obj


def _zero12_fragments(path: Path, inner: dict) -> dict[str, Any]:
    """{entry name: 1-D tensor view} from `param_slice_mappings` (ZeRO-1/2, BF16_Optimizer)."""
    flats = inner.get("single_partition_of_fp32_groups")
    if flats is None:
        return {}  # no fp32 partition saved (offloaded optimizer): nothing of the weights to check here
    mappings = inner.get("param_slice_mappings")
    if not isinstance(flats, list) or not isinstance(mappings, list) or len(mappings) != len(flats):
        raise UnreadableFile(path, "no param_slice_mappings beside the fp32 partitions (DeepSpeed older than "
                                   "0.10?): the partitions cannot be named one rank at a time")
    moments = _base_moments(inner.get("base_optimizer_state"))
    out: dict[str, Any] = {}
    for g, (flat, mapping) in enumerate(zip(flats, mappings)):
        for name, address in mapping.items():
            start, numel = _address(path, name, address)
            _add_fragment(out, name, start, numel, flat, moments.get(g, {}))
    return out


def _address(path: Path, name: str, address) -> tuple[int, int]:
    start = address.field("start") if isinstance(address, Record) else None
    numel = address.field("numel") if isinstance(address, Record) else None
    if not isinstance(start, int) or not isinstance(numel, int):
        raise UnreadableFile(path, f"param_slice_mappings entry of {name} has no start/numel")
    return start, numel


def _base_moments(base) -> dict[int, dict]:
    """{group: {"exp_avg": flat, ...}} of the base torch optimizer (state keyed by group index)."""
    state = base.get("state") if isinstance(base, dict) else None
    if not isinstance(state, dict):
        return {}
    return {g: s for g, s in state.items() if isinstance(g, int) and isinstance(s, dict)}


def _add_fragment(out: dict, name: str, start: int, numel: int, flat, moments: dict) -> None:
    """The master and moment slices [start, start+numel) of one parameter, where they are long enough."""
    out[name + MASTER_SUFFIX] = flat.reshape(-1).narrow(0, start, numel)
    for key in MOMENTS:
        moment = moments.get(key)
        if moment is not None and moment.numel() >= start + numel:
            out[f"{name}.{key}"] = moment.reshape(-1).narrow(0, start, numel)


def _zero3_fragments(path: Path, inner: dict) -> dict[str, Any]:
    """{entry name: 1-D tensor view} of one ZeRO-3 rank, from its own model_states' `param_shapes`.

    A parameter's piece lies inside one sub-group (DeepSpeed forms sub-groups of whole parameters),
    so each is a view of that sub-group's flat tensor: nothing is concatenated or copied.
    """
    rank, world = rank_of(path), _world_size(inner.get("partition_count"))
    if rank is None or world is None:
        raise UnreadableFile(path, "cannot tell this ZeRO-3 file's rank or the partition count")
    shapes = _param_shapes(_model_states_beside(path, rank))
    groups = [t.reshape(-1) for t in inner["fp32_flat_groups"]]
    moments = _zero3_moments(inner.get("optimizer_state_dict"), len(groups))
    out: dict[str, Any] = {}
    group, offset = 0, 0  # the sub-group the next piece is in, and where in it
    for name, numel in shapes:
        per_rank = math.ceil(numel / world)
        while group < len(groups) and offset + per_rank > groups[group].numel():
            if offset != groups[group].numel():
                raise UnreadableFile(path, f"{name} straddles two fp32 sub-groups: param_shapes do not match")
            group, offset = group + 1, 0
        if group == len(groups):
            raise UnreadableFile(path, f"fp32 partition ends before {name}: param_shapes do not match")
        mine = min(per_rank, max(0, numel - rank * per_rank))  # only the last rank holds padding
        if mine:
            _add_fragment(out, name, offset, mine, groups[group], moments.get(group, {}))
        offset += per_rank
    return out


def _world_size(partition_count) -> int | None:
    if isinstance(partition_count, list):
        partition_count = max(partition_count, default=None)
    return partition_count if isinstance(partition_count, int) and partition_count > 0 else None


def _zero3_moments(nested, n_groups: int) -> dict[int, dict]:
    """{sub-group: {"exp_avg": flat, ...}} of ZeRO-3, laid out like `fp32_flat_groups[k]`."""
    state = nested.get("state") if isinstance(nested, dict) else None
    if not isinstance(state, dict) or not state:
        return {}  # offloaded to NVMe/CPU swap: not in the file
    return {k: s for k, s in state.items() if isinstance(k, int) and k < n_groups and isinstance(s, dict)}


def _model_states_beside(path: Path, rank: int) -> Path:
    m = ZERO_OPTIM_FILE.search(path.name)
    candidates = [path.parent / f"zero_pp_rank_{rank}_mp_rank_{m.group('mp')}_model_states.pt",
                  path.parent / f"mp_rank_{m.group('mp')}_model_states.pt"]
    found = next((c for c in candidates if c.exists()), None)
    if found is None:
        raise UnreadableFile(path, f"no {candidates[0].name} beside it: the parameter names and shapes are there")
    return found


def _param_shapes(model_states: Path) -> list[tuple[str, int]]:
    """(name, numel) in `param_shapes` order, all sub-group dicts merged."""
    groups = _load_dict(model_states).get("param_shapes")
    if isinstance(groups, dict):
        groups = [groups]
    if not isinstance(groups, list):
        raise UnreadableFile(model_states, "no param_shapes: cannot name the ZeRO partitions")
    return [(name, math.prod(shape)) for group in groups for name, shape in group.items()]
