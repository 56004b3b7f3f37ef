"""Read `.bin` / `.pt` / `.pth` state dicts with `torch.load(weights_only=True)`, torch imported lazily.

Files from `torch.save` (zip format) are memory-mapped, so a tensor's bytes are read only
when its chunks are. DeepSpeed `*model_states.pt` keep the weights under `module`; their
counters (`skipped_steps`, `global_steps`) are read with `torchpickle.read_deepspeed_counters`,
which executes nothing and needs no torch.
"""
from __future__ import annotations

from contextlib import contextmanager
import pickle
import pickletools
import re
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import UnreadableFile, os_reason
from .dtypes import TORCH_CODES, Scratch
from .entries import TensorEntry, chunk_elements

TORCH_HINT = "install torch to read .bin/.pt (pip install 'forensics[torch]')"
# Keys under which a saved dict keeps its state dict (DeepSpeed: module; others: state_dict, model).
_STATE_KEYS = ("module", "state_dict", "model")


def unread_without_torch(checkpoints) -> list:
    """The checkpoints (CheckpointInfo) left unread, in whole or in part, because torch is not installed."""
    return [c for c in checkpoints if TORCH_HINT in (c.reason or "")
            or any(TORCH_HINT in s.reason for s in c.unreadable_files)]


def import_torch(path):
    """torch, or UnreadableFile(path, install hint) when it is not installed."""
    try:
        import torch
    except ImportError:
        raise UnreadableFile(path, TORCH_HINT) from None
    return torch


class TorchFile:
    """A torch-saved state dict: `entries` (TensorEntry) and `chunks()`, like SafetensorsFile."""

    shareable = False  # loading it again in a worker would cost a torch import and a torch.load

    def __init__(self, path, tensors: dict[str, Any] | None = None):
        """Load `path`; or, with `tensors` ({name: tensor} already loaded from it), just index them."""
        self.path = Path(path)
        self._torch = import_torch(self.path)
        if tensors is None:
            tensors = _tensors_of(load_weights_only(self._torch, self.path), self._torch)
        self.metadata: dict = {}
        self.entries: list[TensorEntry] = []
        self._flat: dict[str, Any] = {}
        for name, tensor in tensors.items():
            dtype = str(tensor.dtype).removeprefix("torch.")
            code = TORCH_CODES.get(dtype)
            problem = None if code else f"dtype {dtype} is not supported; not checked"
            self.entries.append(TensorEntry(name, code or dtype, tuple(tensor.shape), tensor.numel(),
                                            str(self.path), 0, problem))
            self._flat[name] = tensor

    def chunks(self, entry: TensorEntry, start: int, stop: int, scratch: Scratch) -> Iterator[np.ndarray]:
        info = entry.info
        flat = self._flat[entry.name].detach().reshape(-1)
        as_int = {1: self._torch.uint8, 2: self._torch.int16, 4: self._torch.int32, 8: self._torch.int64}[info.itemsize]
        per = chunk_elements(entry, scratch)
        for pos in range(start, stop, per):
            part = flat[pos:min(pos + per, stop)]
            yield part.view(as_int).numpy().view(info.bits)

    def close(self) -> None:
        self._flat.clear()


def load_weights_only(torch, path: Path):
    """torch.load(weights_only=True), memory-mapped where the format allows; raises UnreadableFile."""
    try:
        with quiet_protocol_warning():
            try:
                return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
            except RuntimeError as err:
                if "mmap" not in str(err):
                    raise
                # A legacy (pre-zip) file cannot be memory-mapped: load it whole.
                return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise UnreadableFile(path, _refusal_reason(_refusal(err))) from None
    except OSError as err:
        raise UnreadableFile(path, os_reason(err)) from None
    except Exception as err:  # zip/pickle damage surfaces as RuntimeError, EOFError, ValueError, ...
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UnreadableFile(path, f"damaged or truncated torch file ({first})") from None


_GENERIC_ADVICE = ("Weights only load failed", "Please file an issue", "Check the documentation", "(1)", "(2)")


def _refusal(err: Exception) -> str:
    """The line of torch's weights-only error that names the problem (the others are generic advice)."""
    text = str(err).replace("WeightsUnpickler error:", "\n")
    lines = [line.strip() for line in text.splitlines()]
    named = [line for line in lines if line and not line.startswith(_GENERIC_ADVICE)]
    return named[0][:200] if named else "refused"


@contextmanager
def quiet_protocol_warning():
    """torch.load without its stderr warning about a pickle protocol other than 2: what it could not read is
    said in our own words (UnreadableFile), and a file it reads needs no warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
        yield


_OPCODE_NAMES = {ord(op.code): op.name for op in pickletools.opcodes}


def _refusal_reason(refusal: str) -> str:
    """Why torch's safe loader refused a file, in plain words where its message is an opcode number."""
    refused = f"torch.load(weights_only=True) refused it ({refusal})"
    opcode = re.fullmatch(r"Unsupported operand (\d+)", refusal)
    if opcode is None:
        return f"{refused}: it holds more than tensors, or is damaged"
    name = _OPCODE_NAMES.get(int(opcode.group(1)), opcode.group(1))
    if name == "FRAME":  # protocol 4+: pickle.dump's default, torch.save's only when asked for
        return (f"{refused}: it is a pickle of protocol 4 or later (pickle.dump writes these, torch.save only when "
                "asked to), which torch's safe loader does not read")
    return f"{refused}: a pickle opcode ({name}) that torch's safe loader does not allow"


def _tensors_of(obj, torch) -> dict[str, Any]:
    """The state dict inside what torch.load returned: a flat {name: tensor}."""
    if isinstance(obj, dict):
        for key in _STATE_KEYS:
            inner = obj.get(key)
            if isinstance(inner, dict) and any(isinstance(v, torch.Tensor) for v in inner.values()):
                return _tensors_of(inner, torch)
    out: dict[str, Any] = {}
    _collect(obj, "", out, torch, depth=0)
    return out


def _collect(obj, prefix: str, out: dict, torch, depth: int) -> None:
    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict) and depth < 8:
        for key, value in obj.items():
            _collect(value, f"{prefix}.{key}" if prefix else str(key), out, torch, depth + 1)
    elif isinstance(obj, (list, tuple)) and depth < 8:
        for i, value in enumerate(obj):
            _collect(value, f"{prefix}.{i}" if prefix else str(i), out, torch, depth + 1)
