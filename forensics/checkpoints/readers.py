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

from pathlib import Path

from .entries import WeightFile
from .optimizer_file import OPTIMIZER_FILE_NAMES, OptimizerFile
from .safetensors_file import SafetensorsFile
from .torch_file import TorchFile  # torch itself is imported only when a .bin/.pt file is opened

TORCH_SUFFIXES = (".bin", ".pt", ".pth")


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
    if path.name in OPTIMIZER_FILE_NAMES:
        return OptimizerFile(path)  # a torch optimizer state dict, read without torch
    if path.suffix.lower() in TORCH_SUFFIXES:
        return TorchFile(path)
    return SafetensorsFile(path)
