"""Where a tensor's bytes lie inside a `torch.save` zip, found without torch.

`torch.save` (zip format, torch >= 1.6) writes `<archive>/data.pkl` (the object, tensors as
persistent ids naming a storage) and one uncompressed member `<archive>/data/<key>` per storage,
aligned to 64 bytes by padding in the local header's extra field (torch/serialization.py). So a
storage's first byte is at: member header offset + 30 + name length + extra length. The DCP reader
(`dcp_file`) and the optimizer reader (`optimizer_file`) both read raw bytes from there.
"""
from __future__ import annotations

import struct
import zipfile

import numpy as np

from ..torchpickle import StoragePlaceholder, to_plain

_ZIP_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra field length


def member_data_start(fh, base: int, member: zipfile.ZipInfo) -> int:
    """File offset of the first data byte of `member`, for a zip that starts at byte `base` of `fh`.

    Raises ValueError for a compressed member or a damaged local header."""
    if member.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"{member.filename} is compressed; not supported")
    fh.seek(base + member.header_offset)
    sig, name_len, extra_len = _ZIP_LOCAL_HEADER.unpack(fh.read(_ZIP_LOCAL_HEADER.size))
    if sig != b"PK\x03\x04":
        raise ValueError(f"damaged zip entry {member.filename}")
    return base + member.header_offset + _ZIP_LOCAL_HEADER.size + name_len + extra_len


def tensor_location(obj) -> tuple[StoragePlaceholder, int, tuple[int, ...]]:
    """(storage, element offset, shape) of a contiguous tensor as the inert unpickler left it
    (`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`); ValueError otherwise."""
    args = getattr(obj, "_stub_args", ())
    if len(args) < 4 or not isinstance(args[0], StoragePlaceholder) or not isinstance(args[1], int):
        raise ValueError("no plain tensor in it")
    size, stride = tuple(to_plain(args[2])), tuple(to_plain(args[3]))
    expected = [int(np.prod(size[i + 1:], dtype=np.int64)) for i in range(len(size))]
    if [s for s, d in zip(stride, size) if d > 1] != [e for e, d in zip(expected, size) if d > 1]:
        raise ValueError("a non-contiguous tensor")
    return args[0], args[1], tuple(int(d) for d in size)


def is_tensor_stub(obj) -> bool:
    """Whether the inert unpickler made `obj` from a pickled tensor."""
    return type(obj).__name__ in ("_rebuild_tensor_v2", "_rebuild_tensor") and bool(getattr(obj, "_stub_args", ()))
