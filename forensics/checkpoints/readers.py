"""One small interface over every weight file: list the tensors, read a range of one as raw bits.

    wf = open_weight_file("checkpoint-3600/model.safetensors")   # raises UnreadableFile
    for entry in wf.entries:                                      # TensorEntry: name, dtype, shape
        for bits in wf.chunks(entry, 0, entry.numel, scratch):    # numpy arrays of raw bit patterns
            ...
    wf.close()

`safetensors` files are parsed by hand (no torch, no safetensors library on this path);
`.bin`/`.pt`/`.pth` state dicts go through `torch.load(weights_only=True)`, imported lazily.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Protocol

import numpy as np

from .dtypes import DTYPES, DtypeInfo, Scratch

TORCH_SUFFIXES = (".bin", ".pt", ".pth")


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


def open_weight_file(path) -> WeightFile:
    """Open a `.safetensors`, `.bin`, `.pt` or `.pth` weight file; raises UnreadableFile if it cannot be read."""
    path = Path(path)
    if path.name == ".metadata":
        from .dcp_file import DcpFile
        return DcpFile(path)
    if path.name == "model_optim_rng.pt":
        from .megatron import MegatronFile
        return MegatronFile(path)
    if path.name.endswith(("optim_states.pt", "model_states.pt")):
        from .zero import ZeroModelStates, ZeroRankFile
        return ZeroRankFile(path) if path.name.endswith("optim_states.pt") else ZeroModelStates(path)
    if path.suffix.lower() in TORCH_SUFFIXES:
        from .torch_file import TorchFile
        return TorchFile(path)
    from .safetensors_file import SafetensorsFile
    return SafetensorsFile(path)


def chunk_elements(entry: TensorEntry, scratch: Scratch) -> int:
    """How many elements of `entry` one chunk holds (a multiple of 256 where the budget allows)."""
    n = max(1, scratch.chunk_bytes // entry.info.itemsize)
    return n - n % 256 if n >= 512 else n
