"""torch.distributed.checkpoint (DCP) folders read offline, one chunk at a time, without torch.

A DCP save (BIGSTACK.md section 4; torch/distributed/checkpoint/filesystem.py) is a `.metadata`
pickle plus `__{rank}_{i}.distcp` files. `.metadata` maps each flattened key to its dtype, global
size and chunks (`ChunkStorageMetadata(offsets, sizes)`), and each chunk to a byte range of a
`.distcp` file (`_StorageInfo(relative_path, offset, length)`). FSDP2, torchtitan (`step-N/`),
accelerate's SHARDED_STATE_DICT (`pytorch_model_fsdp_0/`, `optimizer_0/`) and Megatron's
`torch_dist` all write it.

`.metadata` is read by the inert unpickler (nothing is imported or run). Each chunk range is
one `torch.save` zip (filesystem.py `_write_item`), stored uncompressed: we read its small
`data.pkl` inertly for the storage key and offset, then the raw little-endian bytes straight
from the `.distcp` file into the scan's scratch buffer, so memory stays at one buffer whatever the
chunk size. The per-tensor stats do not depend on element order, so a tensor's elements are
visited chunk after chunk.

Names: `model.<fqn>` becomes `<fqn>`, `optimizer.state.<fqn>.<key>` becomes `<fqn>.<key>`
(the planner's path tuples keep FQNs that hold dots whole), Megatron torch_dist's
`optimizer.state.{exp_avg,exp_avg_sq,fp32_param}.<key>` becomes `<key>.{exp_avg,exp_avg_sq,fp32}`;
other keys stay as saved.
"""
from __future__ import annotations

import io
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import UnreadableFile, os_reason
from ..torchpickle import inert_unpickle_bytes, to_plain
from .dtypes import TORCH_CODES, Scratch
from .entries import TensorEntry, chunk_elements
from .torch_zip import member_data_start, tensor_location

METADATA_NAME = ".metadata"
_MAX_METADATA_BYTES = 512 << 20
# Megatron dist_checkpointing/optimizer.py make_sharded_optimizer_tensor: f"{prefix}.{model_param.key}"
_MEGATRON_OPTIMIZER_KEY = re.compile(r"^optimizer\.state\.(?P<role>exp_avg_sq|exp_avg|fp32_param)\.(?P<param>.+)$")


@dataclass(frozen=True)
class ChunkSpan:
    """One saved chunk of a tensor: where its torch.save blob lies, and how many elements it holds."""

    file: str
    offset: int
    length: int
    numel: int


class DcpFile:
    """A DCP folder as a weight file: `path` is its `.metadata`; `entries` and `chunks()` as the others."""

    shareable = True  # a worker re-reads .metadata by path

    def __init__(self, path):
        self.path = Path(path)
        meta = _read_metadata(self.path)
        self.metadata: dict = {"version": meta.get("version")}
        self.entries: list[TensorEntry] = []
        self._spans: dict[str, list[ChunkSpan]] = {}
        self._blob_cache: dict[tuple[str, int], tuple[int, int]] = {}
        self._handles: dict[str, object] = {}
        storage = _storage_index(meta.get("storage_data"))
        planner = meta.get("planner_data") or {}
        for key, tensor_meta in (meta.get("state_dict_metadata") or {}).items():
            if not isinstance(tensor_meta, dict) or "chunks" not in tensor_meta:
                continue  # BytesStorageMetadata: a pickled object, not a tensor
            self._add(entry_name(key, planner.get(key)), key, tensor_meta, storage)

    def _add(self, name: str, key: str, tensor_meta: dict, storage: dict) -> None:
        dtype = _dtype_name(tensor_meta.get("properties"))
        shape = tuple(int(d) for d in tensor_meta.get("size") or ())
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        code = TORCH_CODES.get(dtype)
        spans, problem = _spans(key, tensor_meta["chunks"], storage, self.path.parent)
        if code is None:
            problem = f"dtype {dtype} is not supported; not checked"
        elif problem is None and sum(s.numel for s in spans) != numel:
            problem = "its chunks do not cover the tensor exactly; not checked"
        self.entries.append(TensorEntry(name, code or dtype, shape, numel, str(self.path), 0, problem))
        self._spans[name] = spans

    def chunks(self, entry: TensorEntry, start: int, stop: int, scratch: Scratch) -> Iterator[np.ndarray]:
        info = entry.info
        per = chunk_elements(entry, scratch)
        base = 0
        for span in self._spans[entry.name]:
            lo, hi = max(start, base), min(stop, base + span.numel)
            if lo < hi:
                data_at = self._data_offset(span, info.itemsize)
                for pos in range(lo, hi, per):
                    k = min(per, hi - pos)
                    buf = scratch.raw[: k * info.itemsize]
                    self._read_exact(span.file, buf, data_at + (pos - base) * info.itemsize, entry.name)
                    yield buf.view(info.bits)
            base += span.numel
            if base >= stop:
                return

    def _data_offset(self, span: ChunkSpan, itemsize: int) -> int:
        """File offset of the chunk's first element inside its torch.save blob (cached per blob)."""
        key = (span.file, span.offset)
        if key not in self._blob_cache:
            self._blob_cache[key] = _blob_data_offset(self._handle(span.file), span, itemsize)
        return self._blob_cache[key][0]

    def _handle(self, file: str):
        if file not in self._handles:
            try:
                self._handles[file] = open(file, "rb", buffering=0)
            except OSError as err:
                raise UnreadableFile(self.path, f"its data file {Path(file).name}: {os_reason(err)}") from None
        return self._handles[file]

    def _read_exact(self, file: str, buf: np.ndarray, offset: int, name: str) -> None:
        fh = self._handle(file)
        view = memoryview(buf).cast("B")
        fh.seek(offset)
        while len(view):
            try:
                got = fh.readinto(view)
            except OSError as err:
                raise UnreadableFile(file, os_reason(err)) from None
            if not got:
                raise UnreadableFile(file, f"ends inside {name}: truncated")
            view = view[got:]

    def close(self) -> None:
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()


def entry_name(key: str, path) -> str:
    """The name a DCP key is scanned under (see the module docstring).

    >>> entry_name("model.layers.0.weight", ["model", "layers.0.weight"])
    'layers.0.weight'
    >>> entry_name("optimizer.state.layers.0.weight.exp_avg", ["optimizer", "state", "layers.0.weight", "exp_avg"])
    'layers.0.weight.exp_avg'
    >>> entry_name("optimizer.state.fp32_param.decoder.layers.1.mlp.linear_fc1.weight", None)  # Megatron torch_dist
    'decoder.layers.1.mlp.linear_fc1.weight.fp32'
    """
    megatron = _MEGATRON_OPTIMIZER_KEY.match(key)
    if megatron:
        role = "fp32" if megatron.group("role") == "fp32_param" else megatron.group("role")
        return f"{megatron.group('param')}.{role}"
    if not isinstance(path, list) or not all(isinstance(p, (str, int)) for p in path) or len(path) < 2:
        return key
    parts = [str(p) for p in path]
    if parts[0] == "model":
        return ".".join(parts[1:])
    if parts[:2] == ["optimizer", "state"] and len(parts) >= 4:
        return ".".join(parts[2:])
    return key


def _read_metadata(path: Path) -> dict:
    try:
        size = os.path.getsize(path)
        if size > _MAX_METADATA_BYTES:
            raise UnreadableFile(path, f"{size} bytes: too large for a DCP .metadata")
        raw = path.read_bytes()
    except OSError as err:
        raise UnreadableFile(path, os_reason(err)) from None
    obj = inert_unpickle_bytes(raw, path)
    state = getattr(obj, "_stub_state", None)
    if not isinstance(state, dict) or "state_dict_metadata" not in state:
        raise UnreadableFile(path, "not a torch.distributed.checkpoint .metadata (no state_dict_metadata)")
    return {"state_dict_metadata": to_plain(state["state_dict_metadata"]),
            "planner_data": to_plain(state.get("planner_data")) or {},
            "storage_data": state.get("storage_data"), "version": state.get("version")}


def _storage_index(storage_data) -> dict[tuple[str, tuple], dict]:
    """{(fqn, chunk offsets): {relative_path, offset, length, ...}} from `.metadata`'s storage_data."""
    out = {}
    for key, value in (storage_data or {}).items():
        k, v = to_plain(key), to_plain(value)
        if isinstance(k, dict) and isinstance(v, dict):
            out[(k.get("fqn"), tuple(k.get("offset") or ()))] = v
    return out


def _dtype_name(properties) -> str:
    state = properties.get("__state__") if isinstance(properties, dict) else None
    dtype = state[0] if isinstance(state, list) and state else (properties or {}).get("dtype")
    return str(dtype).removeprefix("torch.")


def _spans(key: str, chunks, storage: dict, folder: Path) -> tuple[list[ChunkSpan], str | None]:
    spans = []
    for chunk in chunks or []:
        offsets = tuple(chunk.get("offsets") or ())
        where = storage.get((key, offsets))
        if where is None:
            return [], f"no storage entry for its chunk at {list(offsets)}; not checked"
        if where.get("transform_descriptors"):
            return [], "its chunks are stored transformed (compressed); not checked"
        numel = int(np.prod(chunk.get("sizes") or (), dtype=np.int64)) if chunk.get("sizes") else 1
        spans.append(ChunkSpan(str(folder / where["relative_path"]), int(where["offset"]), int(where["length"]), numel))
    return spans, None


class _Window(io.RawIOBase):
    """A read-only view of bytes [start, start+length) of an open file, for zipfile."""

    def __init__(self, fh, start: int, length: int):
        self._fh, self._start, self._length, self._pos = fh, start, length, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        self._pos = {0: pos, 1: self._pos + pos, 2: self._length + pos}[whence]
        return self._pos

    def tell(self):
        return self._pos

    def read(self, n=-1):
        n = self._length - self._pos if n is None or n < 0 else min(n, self._length - self._pos)
        self._fh.seek(self._start + self._pos)
        data = self._fh.read(max(n, 0))
        self._pos += len(data)
        return data


def _blob_data_offset(fh, span: ChunkSpan, itemsize: int) -> tuple[int, int]:
    """(file offset of the chunk's first element, its storage numel) inside one torch.save blob."""
    try:
        archive = zipfile.ZipFile(_Window(fh, span.offset, span.length))
        pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
        storage, storage_offset, _ = tensor_location(inert_unpickle_bytes(archive.read(pkl), span.file))
        member = archive.getinfo(f"{pkl[: -len('data.pkl')]}data/{storage.key}")
        start = member_data_start(fh, span.offset, member)
    except (zipfile.BadZipFile, StopIteration, KeyError, OSError, ValueError) as err:
        raise UnreadableFile(span.file,
                             f"chunk at byte {span.offset} is not a readable torch.save blob ({err})") from None
    if (storage_offset + span.numel) * itemsize > member.file_size:
        raise UnreadableFile(span.file, f"chunk at byte {span.offset} holds fewer elements than .metadata says")
    return start + storage_offset * itemsize, member.file_size // itemsize
