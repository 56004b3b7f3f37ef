"""Whether a replay fits this machine: the memory a probe pass needs, set against what is free before anything loads.

The need is the model's parameters in the replay dtype (counted from the safetensors headers, from a pickled file's
size, or from config.json's sizes), a pickled file read whole, and the probe's largest activations; what is free is
the GPU's when CUDA is there, else the RAM's (MemAvailable). A model that will not fit is refused in one line.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ..errors import UnreadableFile
from .loading import text_config, weight_files

BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
HEADROOM = 0.9  # share of the free memory a replay may plan to use


def place(folder: Path, model_folder: Path, config, dtype: str, tokens: int, torch) -> tuple[str, float]:
    """(device, GiB needed): CUDA when it is there and the model fits, else the CPU; refused when neither fits."""
    need = estimate_bytes(model_folder, config, dtype, tokens)
    if folder != model_folder:
        need += sum(f.stat().st_size for f in weight_files(folder)) * 2
    gib = need / 2**30
    ram = _available_memory()
    if torch.cuda.is_available():
        try:
            free = torch.cuda.mem_get_info()[0]
        except Exception:
            free = 0
        if need <= HEADROOM * free and (ram is None or _host_need(model_folder) <= HEADROOM * ram):
            return "cuda", gib
    if ram is None or need <= HEADROOM * ram:
        return "cpu", gib
    where = "GPU memory or RAM" if torch.cuda.is_available() else "RAM"
    hint = " (--dtype bf16 or fp16 halves it)" if dtype == "float32" else ""
    raise UnreadableFile(folder, f"the replay needs about {gib:.1f} GiB in {dtype} and {ram / 2**30:.1f} GiB of "
                                 f"{where} is free: too big for this machine{hint}")


def _host_need(folder: Path) -> int:
    """RAM a load passes through on its way to the GPU: pickled .bin files are read whole."""
    return sum(f.stat().st_size for f in weight_files(folder) if f.suffix != ".safetensors")


def estimate_bytes(folder: Path, config, dtype: str, tokens: int) -> int:
    """Bytes a replay of the model in `folder` needs: its parameters in `dtype`, a pickled file read whole, the probe.

    Parameters are counted from the safetensors headers; for .bin files from their size and the saved dtype;
    with no weight file from config.json's sizes.
    """
    files = weight_files(folder)
    params = sum(_safetensors_params(f) for f in files if f.suffix == ".safetensors")
    pickled = sum(f.stat().st_size for f in files if f.suffix != ".safetensors")
    saved = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    params += pickled // BYTES.get(str(saved).removeprefix("torch."), 4)
    if not params:
        params = _config_params(config)
    return params * BYTES[dtype] + pickled + _activation_bytes(config, tokens) + 256 * 2**20


def _safetensors_params(path: Path) -> int:
    """Elements in a safetensors file, from its header (its size / 2 when the header cannot be read)."""
    try:
        with path.open("rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(n)) if 0 < n < 100_000_000 else None
        return sum(math.prod(spec["shape"]) for key, spec in header.items() if key != "__metadata__")
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return path.stat().st_size // 2


def _config_params(config) -> int:
    """Parameters of a decoder from config.json's sizes (embeddings, attention, MLP): the estimate's fallback."""
    c = text_config(config)
    d, layers = int(getattr(c, "hidden_size", 0) or 0), int(getattr(c, "num_hidden_layers", 0) or 0)
    inner, vocab = int(getattr(c, "intermediate_size", 0) or 4 * d), int(getattr(c, "vocab_size", 0) or 0)
    heads = 1 if getattr(c, "tie_word_embeddings", False) else 2
    return heads * vocab * d + layers * (4 * d * d + 3 * d * inner)


def _activation_bytes(config, tokens: int) -> int:
    """The probe's largest live tensors in float32: logits, the MLP's inner width, attention scores."""
    c = text_config(config)
    d = int(getattr(c, "hidden_size", 0) or 0)
    inner, vocab = int(getattr(c, "intermediate_size", 0) or 4 * d), int(getattr(c, "vocab_size", 0) or 0)
    heads = int(getattr(c, "num_attention_heads", 0) or 1)
    return 4 * tokens * (vocab + 4 * inner + 8 * d) + 4 * heads * tokens * tokens * 2


def _available_memory() -> int | None:
    """Bytes of RAM free for a new process (MemAvailable), or None where that cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None
