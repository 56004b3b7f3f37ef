"""A torch optimizer's saved state (`optimizer.pt` beside an HF Trainer checkpoint), read without torch.

What `torch.save(optimizer.state_dict())` writes (torch/optim/optimizer.py `state_dict`):

    {"state": {index: {"step": tensor or number, "exp_avg": m, "exp_avg_sq": v, ...}},
     "param_groups": [{"params": [index, ...], "lr", "betas", "eps", "weight_decay", ...}, ...]}

Parameters are known by their index only (see `optimizer_names` for the mapping to names). The
pickle is read by the inert unpickler (nothing runs, torch is not needed); each moment's bytes are
then read straight from its uncompressed zip member in bounded chunks, as for a safetensors file,
so memory stays at one chunk buffer whatever the file's size.

Entries are named `<index>.exp_avg` / `<index>.exp_avg_sq`; `optimizer_names` maps indices to names.
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UnreadableFile
from ..torchpickle import inert_unpickle_bytes, to_plain
from .dtypes import DTYPES, TORCH_CODES
from .entries import TensorEntry
from .safetensors_file import SafetensorsFile
from .torch_zip import is_tensor_stub, member_data_start, tensor_location

OPTIMIZER_FILE_NAMES = ("optimizer.pt", "optimizer.bin")
MOMENTS = ("exp_avg", "exp_avg_sq")
_MAX_PICKLE_BYTES = 256 << 20


@dataclass(frozen=True)
class ParamGroup:
    """One optimizer param group: its parameter indices and hyperparameters as saved."""

    params: tuple[int, ...]
    lr: float | None
    betas: tuple[float, float] | None
    eps: float | None
    weight_decay: float
    decoupled: bool  # AdamW's decay (p *= 1 - lr*wd) rather than L2 added to the gradient

    def to_dict(self) -> dict[str, Any]:
        return {"params": len(self.params), "lr": self.lr, "betas": list(self.betas) if self.betas else None,
                "eps": self.eps, "weight_decay": self.weight_decay}


@dataclass(frozen=True)
class ParamState:
    """The saved state of one parameter: its index, step count and moment entries (None when absent)."""

    index: int
    step: float | None
    exp_avg: TensorEntry | None
    exp_avg_sq: TensorEntry | None

    @property
    def shape(self) -> tuple[int, ...] | None:
        entry = self.exp_avg or self.exp_avg_sq
        return entry.shape if entry is not None else None


class OptimizerFile(SafetensorsFile):
    """An `optimizer.pt` as a weight file: one entry per moment tensor, read by byte offset like a
    safetensors file (hence the base class), plus `groups` and `params` (ParamState by index)."""

    shareable = True

    def _index(self) -> None:
        state, self._members = _read_pickle(self._fh, self.path)
        self.groups = _groups(state.get("param_groups"))
        self.params = self._param_states(state.get("state"))
        self.metadata = {"kind": "optimizer"}
        self.entries = [e for p in self.params.values() for e in (p.exp_avg, p.exp_avg_sq) if e is not None]

    def _param_states(self, state) -> dict[int, ParamState]:
        if not isinstance(state, dict):
            raise UnreadableFile(self.path, "not an optimizer state dict (no 'state' mapping)")
        out = {}
        for index, per in state.items():
            if not isinstance(index, int) or not isinstance(per, dict):
                continue
            moments = {key: self._entry(f"{index}.{key}", per.get(key)) for key in MOMENTS}
            out[index] = ParamState(index, self._scalar(per.get("step")), moments["exp_avg"], moments["exp_avg_sq"])
        return dict(sorted(out.items()))

    def _entry(self, name: str, obj) -> TensorEntry | None:
        """The TensorEntry of a pickled tensor (its absolute byte offset in the file), None if `obj` is none."""
        if not is_tensor_stub(obj):
            return None
        try:
            storage, offset, shape = tensor_location(obj)
            member = self._members[storage.key]
            start = member_data_start(self._fh, 0, member)
        except (KeyError, ValueError, OSError) as err:
            return TensorEntry(name, "?", (), 0, str(self.path), 0, f"cannot be located in the file ({err})")
        dtype = _STORAGE_DTYPES.get(storage.dtype.removeprefix("torch.").removesuffix("Storage"), storage.dtype)
        code = TORCH_CODES.get(dtype)
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if code is None:
            return TensorEntry(name, dtype, shape, numel, str(self.path), 0,
                               f"dtype {dtype} is not supported; not checked")
        itemsize = DTYPES[code].itemsize
        if (offset + numel) * itemsize > member.file_size:
            return TensorEntry(name, code, shape, numel, str(self.path), 0,
                               "its storage is smaller than the tensor: truncated or damaged")
        return TensorEntry(name, code, shape, numel, str(self.path), start + offset * itemsize)

    def _scalar(self, obj) -> float | None:
        """A step count saved as a number or as a one-element tensor (read from its bytes)."""
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            return float(obj)
        entry = self._entry("step", obj)
        if entry is None or entry.problem or entry.numel != 1 or entry.dtype not in _SCALAR_TYPES:
            return None
        raw = bytearray(entry.info.itemsize)
        self._fh.seek(entry.offset)
        if self._fh.readinto(raw) != len(raw):
            return None
        return float(np.frombuffer(bytes(raw), dtype=_SCALAR_TYPES[entry.dtype])[0])


_SCALAR_TYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "F16": "<f2"}
# Storage class names (FloatStorage) and their dtypes; typed storages of torch >= 2 pickle the dtype name.
_STORAGE_DTYPES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
                   "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool"}


def _read_pickle(fh, path: Path) -> tuple[dict, dict[str, zipfile.ZipInfo]]:
    """(the state dict as plain containers with tensor stubs, {storage key: zip member})."""
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError) as err:
        raise UnreadableFile(path, f"not a torch zip file ({err}); a legacy or damaged optimizer state "
                                   "cannot be read") from None
    pkl = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
    if pkl is None:
        raise UnreadableFile(path, "no data.pkl inside: not a torch.save file")
    info = archive.getinfo(pkl)
    if info.file_size > _MAX_PICKLE_BYTES:
        raise UnreadableFile(path, f"its pickle is {info.file_size >> 20} MiB: not an optimizer state dict")
    try:
        obj = inert_unpickle_bytes(archive.read(pkl), path)
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise UnreadableFile(path, f"damaged or truncated ({err})") from None
    if not isinstance(obj, dict) or "state" not in obj:
        raise UnreadableFile(path, "not an optimizer state dict (no 'state' key)")
    prefix = pkl[: -len("data.pkl")] + "data/"
    members = {i.filename[len(prefix):]: i for i in archive.infolist() if i.filename.startswith(prefix)}
    return obj, members


def _groups(raw) -> tuple[ParamGroup, ...]:
    groups = []
    for group in to_plain(raw) or []:
        if not isinstance(group, dict):
            continue
        betas = group.get("betas")
        groups.append(ParamGroup(
            params=tuple(int(i) for i in group.get("params") or () if isinstance(i, int)),
            lr=_number(group.get("lr")),
            betas=(float(betas[0]), float(betas[1])) if isinstance(betas, (list, tuple)) and len(betas) == 2 else None,
            eps=_number(group.get("eps")),
            weight_decay=_number(group.get("weight_decay")) or 0.0,
            decoupled=bool(group.get("decoupled_weight_decay", True))))
    return tuple(groups)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def optimizer_file_of(folder: Path) -> Path | None:
    """The optimizer state file of a checkpoint folder, or None."""
    for name in OPTIMIZER_FILE_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None
