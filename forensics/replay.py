"""Activation replay after the fact: `forensics replay CKPT`.

What transformers' DebugUnderflowOverflow does in a live run (SIGNALS.md #6, #14), done on a saved
checkpoint: load it with transformers (local files only), run one probe batch (random token ids with
a fixed seed, or a text file through the folder's tokenizer) in the run's dtype or the one asked,
with a forward hook on every module recording the abs-max and the non-finite count of its output,
in the order the modules ran. The first module whose output is NaN/Inf or past the dtype's limit
(fp16 65504) is named, with the frames before it: "it's the previous frames that we need to look
into". Needs torch and transformers (the `replay` extra); never writes into the checkpoint.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BadOption, NoCheckpoints, UnreadableFile

DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
LIMITS = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
FRAMES = 5  # modules shown before the first bad one
_HINT = "forensics replay needs torch and transformers (pip install 'forensics[replay]')"


@dataclass(frozen=True)
class Frame:
    """One module's output in the probe pass: its abs-max over finite values and its NaN/Inf count."""

    module: str
    absmax: float
    nonfinite: int

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "absmax": self.absmax if math.isfinite(self.absmax) else None,
                "nonfinite": self.nonfinite}


@dataclass(frozen=True)
class ReplayResult:
    """The probe pass over one checkpoint.

    Fields:
        checkpoint: the folder replayed.
        dtype: the dtype it ran in; limit: that dtype's largest finite value.
        tokens: probe length; probe: "random (seed N)" or the text file.
        modules: how many module outputs were recorded.
        first_bad: the first module whose output is NaN/Inf or past `limit`, None when none is.
        reason: "non-finite" or "past the float16 limit", None when nothing is.
        frames: the modules just before the first bad one and it (or the largest outputs when none is bad).
    """

    checkpoint: str
    dtype: str
    limit: float
    tokens: int
    probe: str
    modules: int
    first_bad: str | None
    reason: str | None
    frames: tuple[Frame, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "dtype": self.dtype, "limit": self.limit, "tokens": self.tokens,
                "probe": self.probe, "modules": self.modules, "first_bad": self.first_bad, "reason": self.reason,
                "frames": [f.to_dict() for f in self.frames]}

    def __str__(self) -> str:
        if self.first_bad is None:
            return (f"{self.checkpoint}: {self.modules} module outputs within the {self.dtype} range "
                    f"({self.probe}, {self.tokens} tokens)")
        return f"{self.checkpoint}: {self.first_bad} is the first module whose output is {self.reason} ({self.dtype})"


def replay(path, text: Path | None = None, dtype: str = "auto", tokens: int = 32, seed: int = 0) -> ReplayResult:
    """Run one probe batch through the checkpoint at `path` and name the first module that overflows.

    Raises NoCheckpoints / UnreadableFile / BadOption for what cannot be replayed, with one line saying why.
    """
    folder = Path(path)
    _check_folder(folder)
    if dtype != "auto" and dtype not in DTYPES:
        raise BadOption(f"--dtype {dtype!r}: use auto, fp16, bf16 or fp32")
    try:
        import torch
        import transformers
    except ImportError:
        raise UnreadableFile(folder, _HINT) from None
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    name = DTYPES.get(dtype) or _config_dtype(config)
    torch_dtype = getattr(torch, name)
    model = _load(folder, transformers, torch_dtype)
    ids, probe = _probe(folder, text, tokens, seed, config, torch, transformers)
    frames = _forward(model, ids, torch)
    return _result(folder, name, tokens if text is None else int(ids.shape[1]), probe, frames)


def _check_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise NoCheckpoints(folder, "no such checkpoint folder")
    if (folder / "adapter_config.json").is_file() and not (folder / "config.json").is_file():
        raise NoCheckpoints(folder, "a PEFT adapter only: replay needs the full model (merge the adapter into "
                                    "its base model, or replay the base model's folder)")
    if not (folder / "config.json").is_file():
        raise NoCheckpoints(folder, "no config.json: not a transformers checkpoint folder")


def _config_dtype(config: dict) -> str:
    saved = str(config.get("torch_dtype") or config.get("dtype") or "float32").removeprefix("torch.")
    return saved if saved in LIMITS else "float32"


def _load(folder: Path, transformers, torch_dtype):
    _check_memory(folder, torch_dtype)
    try:
        return transformers.AutoModelForCausalLM.from_pretrained(
            str(folder), dtype=torch_dtype, local_files_only=True).eval()
    except Exception as err:  # the model class, missing weights, damage: one line, not a traceback
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise UnreadableFile(folder, f"transformers could not load it ({first})") from None


def _check_memory(folder: Path, torch_dtype) -> None:
    """Refuse a model that will not fit: its weight files' size (in the replay dtype) against free memory."""
    weights = sum(f.stat().st_size for f in folder.iterdir() if f.suffix in (".safetensors", ".bin"))
    available = _available_memory()
    need = weights * (2 if str(torch_dtype).endswith("float32") else 1)
    if available is not None and need > 0.8 * available:
        raise UnreadableFile(folder, f"needs about {need / 2**30:.1f} GiB to replay, {available / 2**30:.1f} GiB "
                                     "is free: too big for this machine")


def _available_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _probe(folder: Path, text: Path | None, tokens: int, seed: int, config: dict, torch, transformers):
    if text is None:
        generator = torch.Generator().manual_seed(seed)
        vocab = int(config.get("vocab_size") or 1000)
        return torch.randint(0, vocab, (1, tokens), generator=generator), f"random token ids (seed {seed})"
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception:
        raise UnreadableFile(folder, "--text needs the tokenizer in the checkpoint folder") from None
    try:
        content = Path(text).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UnreadableFile(text, f"cannot read the probe text ({err})") from None
    ids = tokenizer(content, return_tensors="pt", truncation=True, max_length=tokens)["input_ids"]
    return ids, str(text)


def _forward(model, ids, torch) -> list[Frame]:
    frames: list[Frame] = []

    def record(module, inputs, output):
        tensor = output[0] if isinstance(output, (tuple, list)) and output else output
        if hasattr(output, "logits"):
            tensor = output.logits
        if not torch.is_tensor(tensor) or not tensor.is_floating_point():
            return
        finite = torch.isfinite(tensor)
        bad = int((~finite).sum())
        absmax = float(tensor.abs().masked_fill(~finite, 0).max()) if tensor.numel() else 0.0
        frames.append(Frame(names[module], absmax, bad))

    names = {module: name or "(model)" for name, module in model.named_modules()}
    hooks = [module.register_forward_hook(record) for module in names]
    try:
        with torch.no_grad():
            model(input_ids=ids.to(next(model.parameters()).device))
    finally:
        for hook in hooks:
            hook.remove()
    return frames


def _result(folder: Path, dtype: str, tokens: int, probe: str, frames: list[Frame]) -> ReplayResult:
    limit = LIMITS[dtype]
    for i, frame in enumerate(frames):
        if frame.nonfinite or frame.absmax > limit:
            reason = "NaN/Inf" if frame.nonfinite else f"past the {dtype} limit {limit:g}"
            return ReplayResult(str(folder), dtype, limit, tokens, probe, len(frames), frame.module, reason,
                                tuple(frames[max(0, i - FRAMES): i + 1]))
    top = tuple(sorted(frames, key=lambda f: -f.absmax)[:FRAMES])
    return ReplayResult(str(folder), dtype, limit, tokens, probe, len(frames), None, None, top)
