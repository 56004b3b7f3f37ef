"""Activation replay after the fact: `forensics replay CKPT`.

What transformers' DebugUnderflowOverflow does in a live run (SIGNALS.md #6, #14), done on a saved
checkpoint: load it with transformers (local files only, never remote code), run one probe batch
(random token ids with a fixed seed, or a text file through the folder's tokenizer) in the run's
dtype or the one asked, with a forward hook on every module recording the abs-max and the NaN/Inf
count of its input and output, in the order the modules ran. The first module whose output is
NaN/Inf or past the dtype's limit (fp16 65504) is named, with the frames before it: "it's the
previous frames that we need to look into".

Before anything is loaded the memory it needs (parameters from the weight files' headers, or from
config.json, in the replay dtype, plus the probe's activations) is set against what is free: the
GPU's when CUDA is there, else RAM; a model that will not fit is refused in one line. A PEFT adapter
folder is replayed on its base model when that base is on this machine (a folder, or the Hugging
Face cache), merged in memory. Needs torch and transformers (the `replay` extra; peft for
adapters); the checkpoint folder is only read.

The run's dtype ("auto"): the HF Trainer's training_args.bin (fp16=True / bf16=True: mixed
precision, whose checkpoints are saved in float32), else config.json's torch_dtype, else float32.
The replay runs the whole model in that dtype, which is stricter than autocast (autocast keeps
norms and softmax in float32): a module past the limit here is one to look at, not proof.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BadOption, UnreadableFile, os_reason
from .loading import (LIMITS, base_folder, check_folder, first_line, import_libraries, load_model, quiet, read_config,
                      run_dtype, text_config)
from .memory import place

DTYPES = {"fp16": "float16", "float16": "float16", "half": "float16",
          "bf16": "bfloat16", "bfloat16": "bfloat16",
          "fp32": "float32", "float32": "float32", "float": "float32"}
FRAMES = 8  # frames shown: the modules before the first bad one (and it), or the largest outputs
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "spiece.model")


@dataclass(frozen=True)
class Frame:
    """One module call in the probe pass: abs-max over the finite values and NaN/Inf counts of its output
    (and of its input hidden states, where it had floating-point ones)."""

    module: str
    type: str
    absmax: float | None
    nan: int
    inf: int
    input_absmax: float | None = None
    input_nonfinite: int = 0

    @property
    def nonfinite(self) -> int:
        return self.nan + self.inf

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "type": self.type, "absmax": self.absmax, "nonfinite": self.nonfinite,
                "nan": self.nan, "inf": self.inf, "input_absmax": self.input_absmax,
                "input_nonfinite": self.input_nonfinite}

    def past(self, limit: float) -> bool:
        return self.nonfinite > 0 or (self.absmax is not None and self.absmax > limit)


@dataclass(frozen=True)
class ReplayResult:
    """The probe pass over one checkpoint.

    Fields:
        checkpoint: the folder replayed; base_model: the base an adapter was merged into (None for a full model).
        model_type: config.json's model_type.
        dtype: what it ran in ("float16"); dtype_source: where that came from ("--dtype", "training_args.bin
            fp16=True", "config.json torch_dtype", "default"); limit: the dtype's largest finite value.
        device: "cpu" or "cuda"; memory_gib: the memory the replay was estimated to need.
        tokens: probe length; probe: "random token ids (seed N)" or the text file.
        modules: how many module outputs were recorded.
        first_bad: the first module (in the order they ran) whose output is NaN/Inf or past `limit`; None when none.
        reason: "overflow" (Inf, or past the limit) or "nan"; None when nothing is.
        input_was_bad: the first bad module's input was already NaN/Inf: the bad values came from code that runs
            in its parent module between its children (attention's softmax, a residual add), not from it.
        origin: where the bad values most likely arose: first_bad, or its parent when input_was_bad.
        frames: the module calls before the first bad one, and it (empty when none is bad).
        largest: the module outputs with the largest finite abs-max, largest first.
        missing_weights: weights the checkpoint lacked, left at their random init (then the replay means little).
    """

    checkpoint: str
    base_model: str | None
    model_type: str
    dtype: str
    dtype_source: str
    limit: float
    device: str
    memory_gib: float
    tokens: int
    probe: str
    modules: int
    first_bad: str | None
    reason: str | None
    input_was_bad: bool
    origin: str | None
    frames: tuple[Frame, ...]
    largest: tuple[Frame, ...]
    missing_weights: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "base_model": self.base_model, "model_type": self.model_type,
                "dtype": self.dtype, "dtype_source": self.dtype_source, "limit": self.limit,
                "device": self.device, "memory_gib": self.memory_gib, "tokens": self.tokens, "probe": self.probe,
                "modules": self.modules, "first_bad": self.first_bad, "reason": self.reason,
                "input_was_bad": self.input_was_bad, "origin": self.origin,
                "frames": [f.to_dict() for f in self.frames],
                "largest": [f.to_dict() for f in self.largest], "missing_weights": list(self.missing_weights)}

    def __str__(self) -> str:
        if self.first_bad is None:
            top = self.largest[0] if self.largest else None
            peak = f"; largest output {top.module} {top.absmax:.4g}" if top and top.absmax is not None else ""
            return (f"{self.checkpoint}: no module output past the {self.dtype} limit {self.limit:.6g} or NaN/Inf "
                    f"({self.modules} outputs, {self.probe}, {self.tokens} tokens){peak}")
        what = "is NaN" if self.reason == "nan" else f"overflows {self.dtype} (past {self.limit:.6g})"
        after = f" after {self.frames[-2].module}" if len(self.frames) > 1 else ""
        came = (f"; its input was already NaN/Inf, so it came from {self.origin}'s own code{after}"
                if self.input_was_bad else "")
        return f"{self.checkpoint}: {self.first_bad} is the first module whose output {what}{came}"


def replay(path, text: Path | str | None = None, dtype: str = "auto", tokens: int = 32, seed: int = 0,
           frames: int = FRAMES) -> ReplayResult:
    """Run one probe batch through the checkpoint at `path` and name the first module whose output overflows.

    Raises BadOption (a bad argument, torch/transformers missing), NoCheckpoints (no model folder, an
    adapter whose base is not here) or UnreadableFile (too big for this machine, transformers could not
    load it, the text unreadable), each with one line saying why.
    """
    folder = Path(path)
    asked = _dtype_asked(dtype)
    if tokens < 1:
        raise BadOption(f"--tokens {tokens}: the probe needs at least one token")
    adapter = check_folder(folder)
    content = _read_text(Path(text)) if text is not None else None
    torch, transformers = import_libraries()
    model_folder = base_folder(folder) if adapter else folder
    with quiet(transformers):
        config = read_config(model_folder, transformers)
        name, source = (asked, "--dtype") if asked else run_dtype(folder, config)
        device, need = place(folder, model_folder, config, name, tokens, torch)
        model, missing = load_model(folder, model_folder, adapter, name, device, torch, transformers)
        ids, probe = _probe(folder, model_folder, content, text, tokens, seed, config, torch, transformers)
    calls = _forward(folder, model, ids.to(device), torch)
    return _result(folder, model_folder if adapter else None, config, name, source, device, need,
                   int(ids.shape[1]), probe, calls, max(1, frames), missing)


def _dtype_asked(dtype: str) -> str | None:
    if dtype == "auto":
        return None
    if dtype not in DTYPES:
        raise BadOption(f"--dtype {dtype!r}: use auto, fp16, bf16 or fp32")
    return DTYPES[dtype]


def _read_text(path: Path) -> str:
    try:
        content = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        reason = os_reason(err) if isinstance(err, OSError) else "not UTF-8 text"
        raise UnreadableFile(path, f"cannot read the probe text ({reason})") from None
    if not content.strip():
        raise UnreadableFile(path, "the probe text is empty")
    return content


def _probe(folder: Path, model_folder: Path, content: str | None, text, tokens: int, seed: int, config,
           torch, transformers):
    positions = getattr(text_config(config), "max_position_embeddings", None)
    if content is None:
        if isinstance(positions, int) and tokens > positions:
            raise BadOption(f"--tokens {tokens}: the model takes at most {positions} positions")
        vocab = int(getattr(text_config(config), "vocab_size", 0) or 0)
        if vocab < 1:
            raise UnreadableFile(folder / "config.json", "no vocab_size: cannot draw random token ids")
        generator = torch.Generator().manual_seed(seed)
        return torch.randint(0, vocab, (1, tokens), generator=generator), f"random token ids (seed {seed})"
    tokenizer = None
    for where in dict.fromkeys((folder, model_folder)):
        if not any((where / name).is_file() for name in TOKENIZER_FILES):
            continue
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(where), local_files_only=True)
            break
        except Exception:
            continue
    if tokenizer is None:
        raise BadOption(f"--text needs the tokenizer in the checkpoint folder ({TOKENIZER_FILES[0]} or "
                        f"{TOKENIZER_FILES[1]}), and {folder} has none that loads")
    limit = min(tokens, positions) if isinstance(positions, int) else tokens
    ids = tokenizer(content, return_tensors="pt", truncation=True, max_length=limit)["input_ids"]
    if ids.shape[1] == 0:
        raise UnreadableFile(text, "the folder's tokenizer makes no tokens of the probe text")
    vocab = int(getattr(text_config(config), "vocab_size", 0) or 0)
    if vocab and int(ids.max()) >= vocab:
        raise BadOption(f"--text: the folder's tokenizer gives token id {int(ids.max())}, past the model's "
                        f"vocab_size {vocab}: not this model's tokenizer")
    return ids, str(text)


def _first_tensor(value, torch):
    """The first tensor in a module's output: the tensor itself, a tuple's first, a ModelOutput's first field."""
    if torch.is_tensor(value):
        return value
    if isinstance(value, dict):  # ModelOutput is an OrderedDict of its non-None fields
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item, torch)
            if found is not None:
                return found
    return None


def _stats(tensor, torch) -> tuple[float | None, int, int] | None:
    """(abs-max over finite values or None, NaN count, Inf count) of a floating-point tensor, else None."""
    if tensor is None or not tensor.is_floating_point() or tensor.numel() == 0:
        return None
    t = tensor.detach()
    finite = torch.isfinite(t)
    nan = int(torch.isnan(t).sum())
    inf = int(t.numel() - int(finite.sum())) - nan
    absmax = t.abs().masked_fill(~finite, 0) if nan or inf else t.abs()
    finite_count = t.numel() - nan - inf
    return (float(absmax.max()) if finite_count else None), nan, inf


def _forward(folder: Path, model, ids, torch) -> list[Frame]:
    """One forward pass with a hook on every module; the frames in the order the modules returned."""
    calls: list[Frame] = []
    names = {module: name or "(model)" for name, module in model.named_modules()}

    def record(module, args, kwargs, output):
        out = _stats(_first_tensor(output, torch), torch)
        if out is None:
            return
        hidden = kwargs.get("hidden_states") if "hidden_states" in kwargs else (args[0] if args else None)
        seen = _stats(hidden if torch.is_tensor(hidden) else None, torch)
        calls.append(Frame(names[module], type(module).__name__, *out,
                           input_absmax=seen[0] if seen else None, input_nonfinite=(seen[1] + seen[2]) if seen else 0))

    hooks = [module.register_forward_hook(record, with_kwargs=True) for module in names]
    try:
        with torch.no_grad():
            model(input_ids=ids, use_cache=False)
    except Exception as err:  # a model that cannot run this probe: one line
        raise UnreadableFile(folder, f"the probe pass failed ({first_line(err)})") from None
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def _result(folder: Path, base: Path | None, config, dtype: str, source: str, device: str, need: float,
            tokens: int, probe: str, calls: list[Frame], shown: int, missing: tuple[str, ...]) -> ReplayResult:
    limit = LIMITS[dtype]
    largest = tuple(sorted((c for c in calls if c.absmax is not None), key=lambda c: -c.absmax)[:shown])
    common = dict(checkpoint=str(folder), base_model=str(base) if base else None,
                  model_type=str(getattr(config, "model_type", "") or ""), dtype=dtype, dtype_source=source,
                  limit=limit, device=device, memory_gib=round(need, 3), tokens=tokens, probe=probe,
                  modules=len(calls), largest=largest, missing_weights=missing)
    for i, call in enumerate(calls):
        if call.past(limit):
            reason = "overflow" if call.inf or not call.nan else "nan"
            parent = call.module.rpartition(".")[0] or "(model)"
            return ReplayResult(**common, first_bad=call.module, reason=reason,
                                input_was_bad=call.input_nonfinite > 0,
                                origin=parent if call.input_nonfinite else call.module,
                                frames=tuple(calls[max(0, i - shown + 1): i + 1]))
    return ReplayResult(**common, first_bad=None, reason=None, input_was_bad=False, origin=None, frames=())
