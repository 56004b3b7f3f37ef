"""Read safetensors files by hand: header checks, then tensor bytes in bounded chunks.

The format (huggingface/safetensors README, FORMATS.md section 9): 8 bytes of little-endian
header length N, N bytes of JSON header, then the data buffer. The header gives each tensor
its dtype, shape and [begin, end) offsets into the buffer; the buffer must be indexed
entirely, without holes, so a truncated file (disk full, killed mid-save) shows from the
header and the file size alone. Every check names the problem in an UnreadableFile.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import UnreadableFile, os_reason
from .dtypes import DTYPES, Scratch
from .entries import TensorEntry, chunk_elements

MAX_HEADER_BYTES = 100_000_000  # safetensors' own MAX_HEADER_SIZE


class SafetensorsFile:
    """An open safetensors file: `entries` (TensorEntry, in file order), `metadata`, and `chunks()`."""

    shareable = True  # cheap to reopen by path in a worker process

    def __init__(self, path):
        self.path = Path(path)
        try:
            self._fh = open(self.path, "rb", buffering=0)
        except OSError as err:
            raise UnreadableFile(self.path, os_reason(err)) from None
        try:
            self._index()
        except BaseException:
            self._fh.close()
            raise

    def _index(self) -> None:
        """Set `entries` and `metadata` from the open file (a reader of another layout overrides this)."""
        self.entries, self.metadata = read_header(self._fh, self.path)

    def chunks(self, entry: TensorEntry, start: int, stop: int, scratch: Scratch) -> Iterator[np.ndarray]:
        info = entry.info
        per = chunk_elements(entry, scratch)
        pos = start
        while pos < stop:
            k = min(per, stop - pos)
            buf = scratch.raw[: k * info.itemsize]
            self._read_exact(buf, entry.offset + pos * info.itemsize, entry.name)
            yield buf.view(info.bits)
            pos += k

    def _read_exact(self, buf: np.ndarray, offset: int, name: str) -> None:
        view = memoryview(buf)
        self._fh.seek(offset)
        while len(view):
            try:
                got = self._fh.readinto(view)
            except OSError as err:
                raise UnreadableFile(self.path, f"read error in tensor {name}: {os_reason(err)}") from None
            if not got:
                raise UnreadableFile(self.path, f"truncated: the file ended inside tensor {name} while reading it")
            view = view[got:]

    def close(self) -> None:
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_header(fh, path: Path) -> tuple[list[TensorEntry], dict]:
    """Parse and check the header of the open file `fh`; returns (entries in offset order, metadata)."""
    size = os.fstat(fh.fileno()).st_size
    if size < 8:
        raise UnreadableFile(path, f"truncated: {size} bytes, too short for a safetensors file")
    n = int.from_bytes(fh.read(8), "little")
    if n > MAX_HEADER_BYTES:
        raise UnreadableFile(path, f"header length {n} is over the 100 MB limit: corrupt, or not a safetensors file")
    if 8 + n > size:
        raise UnreadableFile(path, f"truncated: the header needs {n} bytes but the file ends {size - 8} bytes in")
    header = _parse_json(fh.read(n), path)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise UnreadableFile(path, "corrupt header: __metadata__ is not an object")
    entries = sorted((_entry(name, spec, path) for name, spec in header.items()), key=lambda e: e[1])
    _check_layout(entries, size - 8 - n, path)
    base = 8 + n
    return [TensorEntry(e.name, e.dtype, e.shape, e.numel, e.file, base + begin, e.problem)
            for e, begin, _ in entries], metadata


def _parse_json(raw: bytes, path: Path) -> dict:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile(path, "header is not UTF-8 text: corrupt, or not a safetensors file") from None
    if not text.startswith("{"):
        raise UnreadableFile(path, "header does not start with '{': corrupt, or not a safetensors file")
    try:
        header = json.loads(text)
    except json.JSONDecodeError as err:
        raise UnreadableFile(path, f"header is not valid JSON ({err.msg} at character {err.pos})") from None
    except RecursionError:
        raise UnreadableFile(path, "header JSON is nested too deeply") from None
    if not isinstance(header, dict):
        raise UnreadableFile(path, "header is not a JSON object")
    return header


def _entry(name: str, spec, path: Path) -> tuple[TensorEntry, int, int]:
    """(entry with offset 0, begin, end) for one header item; raises on a malformed item."""
    if not isinstance(spec, dict):
        raise UnreadableFile(path, f"corrupt header: entry {name!r} is not an object")
    dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
    if not isinstance(dtype, str):
        raise UnreadableFile(path, f"corrupt header: tensor {name!r} has no dtype")
    if not (isinstance(shape, list) and all(_is_count(d) for d in shape)):
        raise UnreadableFile(path, f"corrupt header: tensor {name!r} has shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        raise UnreadableFile(path, f"corrupt header: tensor {name!r} has data_offsets {offsets!r}")
    begin, end = offsets
    numel = math.prod(shape)
    info = DTYPES.get(dtype)
    problem = None
    if info is None:
        problem = f"dtype {dtype} is not supported; not checked"
    elif numel * info.itemsize != end - begin:
        raise UnreadableFile(path, f"corrupt header: tensor {name} of shape {shape} and dtype {dtype} needs "
                                   f"{numel * info.itemsize} bytes but its offsets span {end - begin}")
    return TensorEntry(name, dtype, tuple(shape), numel, str(path), 0, problem), begin, end


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_layout(entries: list[tuple[TensorEntry, int, int]], buffer_size: int, path: Path) -> None:
    """The data buffer must be covered exactly: no overlap, no hole, and no byte missing or extra."""
    expected = 0
    for entry, begin, end in entries:
        if begin != expected:
            raise UnreadableFile(path, f"corrupt header: tensor {entry.name} starts at data byte {begin}, "
                                       f"but the tensor before it ends at {expected}")
        expected = end
    if expected > buffer_size:
        raise UnreadableFile(path, f"truncated: the header describes {expected} data bytes but the file holds "
                                   f"{buffer_size} ({expected - buffer_size} bytes missing)")
    if expected < buffer_size:
        raise UnreadableFile(path, f"corrupt: {buffer_size - expected} bytes after the last tensor "
                                   "(the format allows none)")
