"""What every weight-file reader shares: `TensorEntry` (one tensor of a file), the `WeightFile`
interface, and how many elements one chunk holds.

The readers (`safetensors_file`, `torch_file`) import this; the dispatcher `readers.open_weight_file`
imports the readers. Nothing here reads a file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol

import numpy as np

from .dtypes import DTYPES, DtypeInfo, Scratch


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a weight file.

    Fields:
        name: the tensor's name in the file.
        dtype: the safetensors dtype code (`BF16`, `F32`, ...), or the file's own name for a type we cannot read.
        shape: its shape.
        numel: number of elements.
        file: the file it lives in.
        offset: byte offset of its first element in the file (safetensors; 0 otherwise).
        problem: why it cannot be checked (an unsupported dtype), else None.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    numel: int
    file: str
    offset: int = 0
    problem: str | None = None

    @property
    def info(self) -> DtypeInfo | None:
        return None if self.problem else DTYPES.get(self.dtype)

    @property
    def nbytes(self) -> int:
        info = self.info
        return self.numel * info.itemsize if info else 0


class WeightFile(Protocol):
    """What every reader offers (see the module docstring)."""

    path: Path
    entries: list[TensorEntry]
    metadata: dict

    def chunks(self, entry: TensorEntry, start: int, stop: int, scratch: Scratch) -> Iterator[np.ndarray]:
        """Elements [start, stop) of `entry` as raw bits (`entry.info.bits` dtype), in chunks that fit `scratch`."""

    def close(self) -> None:
        """Release the file."""


def chunk_elements(entry: TensorEntry, scratch: Scratch) -> int:
    """How many elements of `entry` one chunk holds (a multiple of 256 where the budget allows)."""
    n = max(1, scratch.chunk_bytes // entry.info.itemsize)
    return n - n % 256 if n >= 512 else n
